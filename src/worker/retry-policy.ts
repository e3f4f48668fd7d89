import { InvalidEventError, InvalidJobViewError } from '../lifecycle/index.js';
import { InvalidUsageError } from '../pricing/index.js';
import { JobNotFound, SettlementMismatch } from '../ledger/index.js';
import type { RetryPolicy } from '../queue/index.js';
import { DEFAULT_CONFIG } from '../config/index.js';

/**
 * Settlement attempts before an event is dead-lettered, by default (8): the command hands
 * down TALLY_MAX_ATTEMPTS (an operator who wants dead letters sooner, a test that cannot
 * wait a minute for them) in its SettleSettings (settle-event.ts).
 */
export const MAX_SETTLE_ATTEMPTS = DEFAULT_CONFIG.maxAttempts;
/** Backoff between attempts: exponential from 500 ms, capped at 30 s, uniform in [ceiling/2, ceiling]. */
export const RETRY_BASE_MS = 500;
export const RETRY_CAP_MS = 30_000;

/**
 * Errors that no retry can fix: the event contradicts the job or the data is broken.
 * They are dead-lettered at once, for an operator to look at.
 */
export function isPermanent(error: unknown): boolean {
  return (
    error instanceof InvalidEventError ||
    error instanceof InvalidUsageError ||
    error instanceof InvalidJobViewError ||
    error instanceof SettlementMismatch ||
    error instanceof JobNotFound
  );
}

/** Settling's policy in the queue engine: dead after `maxAttempts` attempts, or at once when permanent. */
export function settleRetry(maxAttempts: number): RetryPolicy {
  return {
    backoff: { floorMs: 'half', firstMs: RETRY_BASE_MS, capMs: RETRY_CAP_MS },
    maxAttempts,
    retryForMs: null,
  };
}
