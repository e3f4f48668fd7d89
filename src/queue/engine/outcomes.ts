import type { Pool, PoolClient, Queryable } from '../../db/pool.js';
import { ConnectionLost } from '../../db/errors.js';
import { withTransaction } from '../../db/transaction.js';
import { LeaseLost } from './errors.js';
import { deadLetter, readBack, retryLater } from './operations.js';
import { afterFailure, type AfterFailure, type Failure, type RetryPolicy } from './retry-policy.js';
import type { FencedClaim, QueueTable } from './table.js';

export type FailedOutcome = AfterFailure | { kind: 'lease_lost' };

/**
 * A failed attempt, recorded: retried with the policy's backoff, or dead-lettered (after
 * its attempts, past its window, or at once when permanent) — fenced, so a claim another
 * worker took over records nothing and its failure is not the row's attempt.
 */
export async function recordFailure(
  db: Queryable,
  table: QueueTable,
  policy: RetryPolicy,
  claim: FencedClaim,
  failure: Failure,
  error: string | null,
): Promise<FailedOutcome> {
  const next = afterFailure(policy, failure);
  const written = next.kind === 'dead' ? await deadLetter(db, table, claim, error) : await retryLater(db, table, claim, next.delayMs, error);
  return written ? next : { kind: 'lease_lost' };
}

/**
 * Runs `write` — a claim's outcome: its fenced writes and whatever goes with them — in one
 * transaction. A fenced write that finds the claim gone throws LeaseLost: everything rolls
 * back and this answers 'lease_lost'. When the connection breaks after every statement ran,
 * the COMMIT's outcome is unknown: on a fresh connection, wait for the in-doubt
 * transaction to let go of the row and read it back (operations.ts: readBack) before
 * anything is written again — committed, its result stands; still ours and not
 * committed, it is written once more; moved on, nothing more is ours to write.
 */
export async function commitFenced<T>(
  pool: Pool,
  table: QueueTable,
  claim: FencedClaim,
  write: (tx: PoolClient) => Promise<T>,
): Promise<T | 'lease_lost'> {
  for (let round = 1; ; round++) {
    const attempt: { ran?: { value: T } } = {};
    try {
      return await withTransaction(pool, async (tx) => {
        const value = await write(tx);
        attempt.ran = { value };
        return value;
      });
    } catch (error) {
      if (error instanceof LeaseLost) return 'lease_lost';
      // Broken before its last statement finished: COMMIT was never sent, nothing committed.
      const committed = attempt.ran;
      if (!(error instanceof ConnectionLost) || !committed || round > 1) throw error;
      const state = await withTransaction(pool, (tx) => readBack(tx, table, claim, true), { maxAttempts: 1 });
      if (state === 'committed') return committed.value;
      if (state === 'moved_on') return 'lease_lost';
    }
  }
}
