import { backoff, sleep, type BackoffPolicy } from '../backoff.js';
import type { Pool, PoolClient, Queryable } from './pool.js';
import { ConnectionLost, DeadlockDetected, SerializationFailure, mapDatabaseError } from './errors.js';

/** Retry n of a transaction waits uniformly in [5, min(200, 5·2^n)] ms: conflicts clear fast. */
export const TRANSACTION_RETRY_BACKOFF: BackoffPolicy = { floorMs: 5, firstMs: 10, capMs: 200 };

/** Whole-transaction retry for the errors PostgreSQL tells us to retry. */
export const RETRYABLE = {
  serializationFailure: { error: SerializationFailure, backoff: TRANSACTION_RETRY_BACKOFF },
  deadlockDetected: { error: DeadlockDetected, backoff: TRANSACTION_RETRY_BACKOFF },
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
      await sleep(backoff(attempt, retry.backoff));
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
    // A server going away or refusing writes as read-only (a standby, a demoted primary)
    // may still answer the ROLLBACK: its connection must not go back to the pool.
    if (mapped instanceof ConnectionLost) broken = true;
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

/**
 * Runs `fn` inside a savepoint of the open transaction `tx`: kept (released) when `fn`
 * resolves; rolled back to when it rejects, so that one failed step — typically a unique
 * violation the caller expected and answers — leaves the transaction usable and the
 * writes before it in place. The error is rethrown as it was; what it means is the
 * caller's to decide.
 */
export async function withSavepoint<T>(tx: Queryable, name: string, fn: () => Promise<T>): Promise<T> {
  // The name is spliced into the statement (savepoints take no parameters).
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`savepoint name ${JSON.stringify(name)} must be a plain SQL identifier`);
  await tx.query(`savepoint ${name}`);
  let result: T;
  try {
    result = await fn();
  } catch (error) {
    // If even this fails the connection or transaction is gone: the step's own error
    // says why, and withTransaction's rollback discards what is left.
    await tx.query(`rollback to savepoint ${name}`).catch(() => {});
    throw error;
  }
  await tx.query(`release savepoint ${name}`);
  return result;
}
