/**
 * Where a job is in its life (CONTRACT "Job states and events"). A job's hold
 * is open in every non-terminal state and resolved, exactly once, by reaching
 * a terminal one: `captured` (usage charged, rest voided) or `released`
 * (whole hold voided).
 */
export type JobState =
  | 'reserved' // hold placed, provider has not reported yet
  | 'running' // provider said it started
  | 'cancel_requested' // tenant asked to cancel; the hold stays until a terminal event or the grace
  | 'usage_pending' // a named adapter is fetching usage for a terminal event
  | 'captured'
  | 'released';

export const NON_TERMINAL_STATES = ['reserved', 'running', 'cancel_requested', 'usage_pending'] as const;
export const TERMINAL_STATES = ['captured', 'released'] as const;
export const JOB_STATES: readonly JobState[] = [...NON_TERMINAL_STATES, ...TERMINAL_STATES];

export type TerminalState = (typeof TERMINAL_STATES)[number];

export function isTerminal(state: JobState): state is TerminalState {
  return state === 'captured' || state === 'released';
}
