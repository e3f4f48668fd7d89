import type { FAILPOINT_NAMES } from './config/index.js';

/**
 * Named crash points for the failure-injection suite: TALLY_FAILPOINTS=a,b makes the
 * process SIGKILL itself when it reaches point a or b — a real abrupt exit, no
 * cleanup, no flushed buffers. With none armed this is one Set lookup. A test knob deep
 * in the settle path: armed once by the command that starts (src/cli/main.ts) rather
 * than passed down through every call that may reach a point.
 */
let armed: ReadonlySet<string> = new Set();

export type FailpointName = (typeof FAILPOINT_NAMES)[number];

/** Arms these points for the rest of the process (TALLY_FAILPOINTS); none are armed until then. */
export function armFailpoints(names: readonly FailpointName[]): void {
  armed = new Set(names);
}

export function failpoint(name: FailpointName): void {
  if (armed.size !== 0 && armed.has(name)) process.kill(process.pid, 'SIGKILL');
}
