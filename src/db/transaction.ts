import type { Pool, PoolClient } from './pool.js';
import { DeadlockDetected, SerializationFailure, mapDatabaseError } from './errors.js';

/** Whole-transaction retry for the errors PostgreSQL tells us to retry. */
export const RETRYABLE = {
  serializationFailure: { error: SerializationFailure, minDelayMs: 5, maxDelayMs: 200 },
  deadlockDetected: { error: DeadlockDetected, minDelayMs: 5, maxDelayMs: 200 },
} as const;
export const MAX_TRANSACTION_ATTEMPTS = 8;

export type IsolationLevel = 'read committed' | 'repeatable read' | 'serializable';

export interface TransactionOptions {
  isolation?: IsolationLevel;
  maxAttempts?: number;
  /** runs after a failed attempt, before the retry (tests count retries with it) */
  onRetry?: (error: Error, attempt: number) => void;
}

/**
 * The only way to open a transaction: commits when `fn` resolves, rolls back and
 * rethrows when it rejects, and retries the whole `fn` on serialization failures
 * and deadlocks with jittered exponential backoff. `fn` must therefore be safe to
 * run again: no external effects inside.
 */
export async function withTransaction<T>(
  pool: Pool,
  fn: (tx: PoolClient) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const maxAttempts = options.maxAttempts ?? MAX_TRANSACTION_ATTEMPTS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await runOnce(pool, fn, options.isolation);
    } catch (error) {
      const retry = retryPolicyOf(error);
      if (!retry || attempt >= maxAttempts) throw error;
      options.onRetry?.(error as Error, attempt);
      await sleep(backoff(attempt, retry.minDelayMs, retry.maxDelayMs));
    }
  }
}

async function runOnce<T>(pool: Pool, fn: (tx: PoolClient) => Promise<T>, isolation?: IsolationLevel): Promise<T> {
  const client = await pool.connect().catch((error: unknown) => {
    throw mapDatabaseError(error);
  });
  let broken = false;
  try {
    await client.query(isolation ? `begin isolation level ${isolation}` : 'begin');
    const result = await fn(client);
    await client.query('commit');
    return result;
  } catch (error) {
    const mapped = mapDatabaseError(error);
    broken = await rollback(client);
    throw mapped;
  } finally {
    client.release(broken);
  }
}

/** Returns true when the connection is unusable and must be discarded. */
async function rollback(client: PoolClient): Promise<boolean> {
  try {
    await client.query('rollback');
    return false;
  } catch {
    return true;
  }
}

function retryPolicyOf(error: unknown) {
  return Object.values(RETRYABLE).find((policy) => error instanceof policy.error);
}

/** Full jitter: uniform in [min, min(max, min·2^attempt)]. */
export function backoff(attempt: number, minMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, minMs * 2 ** attempt);
  return minMs + Math.random() * (ceiling - minMs);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
