import { afterFailure as engineAfterFailure, type AfterFailure, type RetryPolicy } from '../queue/engine/index.js';

export type { AfterFailure };

/**
 * When a failed delivery is tried again (pure): the engine's retry policy with full jitter
 * — retry n waits uniformly between 0 and min(cap, first · 2^(n−1)), by default 5 s
 * doubling, capped at 6 h — so the retries of many messages to one endpoint that came
 * back spread out instead of arriving together. A delivery whose next try would fall past
 * its retry window (72 h from when it was created, by default: about 24 attempts) is dead.
 */
export interface RetrySchedule {
  backoffFirstMs: number;
  backoffCapMs: number;
  retryForMs: number;
}

/** The schedule as the engine's policy: no attempt limit, a retry window instead. */
export function retryPolicyOf(schedule: RetrySchedule): RetryPolicy {
  return {
    backoff: { firstMs: schedule.backoffFirstMs, capMs: schedule.backoffCapMs, floorMs: 0 },
    maxAttempts: null,
    retryForMs: schedule.retryForMs,
  };
}

/**
 * `attempts`: how many attempts have failed, this one included; `ageMs`: how long ago
 * the delivery was created.
 */
export function afterFailure(attempts: number, ageMs: number, schedule: RetrySchedule, random: () => number = Math.random): AfterFailure {
  return engineAfterFailure(retryPolicyOf(schedule), { attempts, ageMs }, random);
}
