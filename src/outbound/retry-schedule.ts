import { backoff, type BackoffPolicy } from '../backoff.js';

/**
 * When a failed delivery is tried again (pure). Exponential backoff with full jitter: retry
 * n waits uniformly between 0 and min(cap, first · 2^(n−1)) — by default 5 s doubling,
 * capped at 6 h — so the retries of many messages to one endpoint that came back spread
 * out instead of arriving together. A delivery whose next try would fall past its
 * retry window (72 h from when it was created, by default: about 24 attempts) is dead.
 */
export interface RetrySchedule {
  backoffFirstMs: number;
  backoffCapMs: number;
  retryForMs: number;
}

export type AfterFailure = { kind: 'retry'; delayMs: number } | { kind: 'dead' };

/**
 * `attempts`: how many attempts have failed, this one included; `ageMs`: how long ago
 * the delivery was created.
 */
export function afterFailure(attempts: number, ageMs: number, schedule: RetrySchedule, random: () => number = Math.random): AfterFailure {
  const policy: BackoffPolicy = { firstMs: schedule.backoffFirstMs, capMs: schedule.backoffCapMs, floorMs: 0 };
  const delayMs = Math.round(backoff(attempts, policy, random));
  return ageMs + delayMs > schedule.retryForMs ? { kind: 'dead' } : { kind: 'retry', delayMs };
}
