import type { Pool, Queryable } from '../db/pool.js';
import { ConnectionLost } from '../db/errors.js';
import { withTransaction } from '../db/transaction.js';
import { failpoint } from '../failpoints.js';
import type { EventClaim } from '../queue/index.js';
import { JobNotFound } from './errors.js';
import { lockJobs } from './locked-job.js';
import { readBack, type InDoubt } from './read-back.js';
import { moveAccounts, writeDecisions, type SettleRequest, type SettleResult } from './write-decision.js';

/**
 * Settles the claimed events of several jobs in ONE transaction: the jobs locked in id
 * order, the events decided and written as settle() would, each table in one statement
 * for the whole batch (write-decision.ts), then every touched account
 * moved once, wallets before revenue accounts, each set in id order (docs/ARCHITECTURE.md "Lock order", the one
 * lock order), and one COMMIT. The hot wallet row is then updated once per batch
 * instead of once per event. All or nothing: if any event fails — a unique violation, a
 * lost claim, a settlement key that exists, a bad event — the whole batch rolls back and the caller settles each event
 * on its own with settle(), where its failure stays its own. At most one event per job.
 * A connection lost around COMMIT is read back as settle()'s is (read-back.ts): a
 * committed batch returns its results, one that did not throws the ConnectionLost.
 */
export async function settleBatch(pool: Pool, requests: BatchRequest[]): Promise<SettleResult[]> {
  return (await settleTaken(pool, async () => requests)).results;
}

export type BatchRequest = SettleRequest & { claim: EventClaim };

/** What settleTaken took and what settling it returned, in the same order. */
export interface TakenBatch {
  requests: BatchRequest[];
  results: SettleResult[];
}

/**
 * settleBatch for events taken inside the transaction itself: `take` runs first in it
 * (the worker's: lockReadyEvents, keeping the events this transaction can finish), then
 * the taken events are settled as settleBatch settles, and all of it commits at once —
 * so a locked event is written once, by its mark. `take` runs again if the transaction
 * is retried (40001/40P01). Nothing taken: nothing settled, the transaction ends empty.
 */
export async function settleTaken(pool: Pool, take: (tx: Queryable) => Promise<BatchRequest[]>): Promise<TakenBatch> {
  // What this attempt wrote, to tell after a lost COMMIT whether it committed.
  const attempt: InDoubt<TakenBatch> = { jobIds: [], written: [], result: null };
  try {
    return await withTransaction(pool, async (tx) => {
      // withTransaction may run this again after 40001/40P01: start clean each time.
      Object.assign(attempt, { jobIds: [], written: [], result: null });
      const requests = await take(tx);
      if (requests.length === 0) return { requests, results: [] };
      const jobIds = requests.map((r) => r.jobId);
      if (new Set(jobIds).size !== jobIds.length) throw new RangeError('a batch holds at most one event per job');
      attempt.jobIds = jobIds;
      const jobs = await lockJobs(tx, jobIds, oneTenant(requests.map((r) => r.claim.tenantId)));
      for (const jobId of jobIds) if (!jobs.has(jobId)) throw new JobNotFound(jobId);
      const written = await writeDecisions(tx, jobs, requests);
      attempt.written = written.map((w, i) => ({ claim: requests[i]!.claim, settlement: w.inserted.at(-1) ?? null }));
      const results = await moveAccounts(tx, written);
      attempt.result = { requests, results };
      failpoint('settle.before_commit');
      return attempt.result;
    });
  } catch (error) {
    if (!(error instanceof ConnectionLost)) throw error;
    const committed = await readBack(pool, attempt, {
      what: `a batch of ${attempt.jobIds.length} events`,
      again: 'settle its events again',
    });
    if (committed) return committed;
    // Not committed: nothing of the batch was written, and the caller settles each
    // event on its own (worker/settle-event.ts).
    throw error;
  }
}

/** The one tenant all of them name, or undefined (a claim made by hand names none). */
function oneTenant(tenants: readonly (string | undefined)[]): string | undefined {
  return new Set(tenants).size === 1 ? tenants[0] : undefined;
}
