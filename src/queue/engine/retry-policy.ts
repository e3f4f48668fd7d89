import { backoff, type BackoffPolicy } from '../../backoff.js';

/**
 * A queue's retry policy (pure): exponential backoff with jitter under a doubling,
 * capped ceiling (backoff.ts), and when to give up — after `maxAttempts` attempts, when
 * the next try would fall past `retryForMs` from the row's creation, or at once for a
 * failure no retry can fix.
 */
export interface RetryPolicy {
  readonly backoff: BackoffPolicy;
  /** dead once this many attempts failed (this one included), or null */
  readonly maxAttempts: number | null;
  /** dead when the next try would come later than this after the row was created, or null */
  readonly retryForMs: number | null;
}

export type AfterFailure = { kind: 'retry'; delayMs: number } | { kind: 'dead' };

export interface Failure {
  /** attempts that failed so far, this one included */
  attempts: number;
  /** how long ago the row was created (for retryForMs) */
  ageMs?: number;
  /** no retry can fix it: dead at once */
  permanent?: boolean;
}

/** What becomes of a failed attempt. Delays are whole milliseconds (stored, logged). */
export function afterFailure(policy: RetryPolicy, failure: Failure, random: () => number = Math.random): AfterFailure {
  if (failure.permanent) return { kind: 'dead' };
  if (policy.maxAttempts !== null && failure.attempts >= policy.maxAttempts) return { kind: 'dead' };
  const delayMs = Math.round(backoff(failure.attempts, policy.backoff, random));
  if (policy.retryForMs !== null && (failure.ageMs ?? 0) + delayMs > policy.retryForMs) return { kind: 'dead' };
  return { kind: 'retry', delayMs };
}
