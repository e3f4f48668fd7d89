/**
 * Named crash points for the failure-injection suite: TALLY_FAILPOINTS=a,b makes the
 * process SIGKILL itself when it reaches point a or b — a real abrupt exit, no
 * cleanup, no flushed buffers. With the variable unset this is one Set lookup.
 */
const armed = new Set((process.env.TALLY_FAILPOINTS ?? '').split(',').map((s) => s.trim()).filter(Boolean));

export type FailpointName =
  | 'worker.after_claim'
  | 'settle.before_commit'
  | 'worker.after_commit'
  | 'intake.after_commit';

export function failpoint(name: FailpointName): void {
  if (armed.size !== 0 && armed.has(name)) process.kill(process.pid, 'SIGKILL');
}
