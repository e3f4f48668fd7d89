import { processConfig, type FAILPOINT_NAMES } from './config/index.js';

/**
 * Named crash points for the failure-injection suite: TALLY_FAILPOINTS=a,b makes the
 * process SIGKILL itself when it reaches point a or b — a real abrupt exit, no
 * cleanup, no flushed buffers. With the variable unset this is one Set lookup. A test
 * knob deep in the settle path: read from the process's configuration rather than
 * passed down through every call that may reach a point.
 */
const armed: ReadonlySet<string> = new Set(processConfig().failpoints);

export type FailpointName = (typeof FAILPOINT_NAMES)[number];

export function failpoint(name: FailpointName): void {
  if (armed.size !== 0 && armed.has(name)) process.kill(process.pid, 'SIGKILL');
}
