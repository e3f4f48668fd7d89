import type { Pool, Queryable } from '../db/pool.js';
import { ConnectionLost } from '../db/errors.js';
import { backoff, sleep, type BackoffPolicy } from '../backoff.js';
import { withTransaction, type TransactionOptions } from '../db/transaction.js';
import { failpoint } from '../failpoints.js';
import { parseSettlementKey, type JobState } from '../lifecycle/index.js';
import { JobNotFound, SettlementKeyTaken, SettlementMismatch } from './errors.js';
import { lockJob } from './locked-job.js';
import { readBack } from './read-back.js';
import { findSettlement } from './settlements.js';
import type { SettlementRow } from './settlements.js';
import { moveAccounts, writeDecisions, type SettleRequest, type SettleResult } from './write-decision.js';

export type { SettleRequest, SettleResult } from './write-decision.js';

export interface SettleOptions {
  /** called before each whole-transaction retry after 40001/40P01 (metrics, tests) */
  onRetry?: TransactionOptions['onRetry'];
}

/** Attempts after a connection loss whose transaction read back as not committed. */
const MAX_UNKNOWN_OUTCOME_ATTEMPTS = 3;
const UNKNOWN_OUTCOME_BACKOFF: BackoffPolicy = { floorMs: 20, firstMs: 40, capMs: 500 };

/** What one attempt of the transaction got to: what it wrote, and the result it was about to commit. */
interface Attempt {
  /** the settlement row it inserted: its id tells our commit from somebody else's */
  written: SettlementRow | null;
  result: SettleResult | null;
}

/**
 * One financial decision in one short transaction (docs/ARCHITECTURE.md "The flow"): lock the
 * job, decide on the locked state, write the settlement, entries, hold and job, mark
 * the event, move the account projections, commit. No I/O but this database inside.
 *
 * Outcomes: a settlement key that exists (SettlementKeyTaken) returns the existing settlement
 * (after checking it is the same job, phase and version); 40001/40P01 retry the whole
 * transaction (withTransaction); a connection lost around COMMIT is resolved by
 * reading this attempt's own write back (read-back.ts) before writing again; anything else is thrown.
 */
export async function settle(pool: Pool, request: SettleRequest, options: SettleOptions = {}): Promise<SettleResult> {
  return settleOnce(pool, request, options, false);
}

async function settleOnce(pool: Pool, request: SettleRequest, options: SettleOptions, afterDuplicate: boolean): Promise<SettleResult> {
  for (let attempt = 1; ; attempt++) {
    const state: Attempt = { written: null, result: null };
    try {
      return await withTransaction(
        pool,
        async (tx) => {
          // withTransaction may run this again after 40001/40P01: start clean each time.
          Object.assign(state, { written: null, result: null });
          state.result = await settleInTransaction(tx, request, state);
          return state.result;
        },
        options.onRetry ? { onRetry: options.onRetry } : {},
      );
    } catch (error) {
      if (error instanceof SettlementKeyTaken) {
        return await existingResult(pool, request, options, error.settlementKey, afterDuplicate);
      }
      if (!(error instanceof ConnectionLost)) throw error;
      // Committed: the attempt's own result. Not (or it never reached COMMIT): write again.
      const { written, result } = state;
      const what = written ? `settlement ${written.settlement_key}` : `event ${request.claim?.provider}/${request.claim?.eventKey}`;
      const inDoubt = { jobIds: [request.jobId], written: [{ settlement: written, claim: request.claim }], result };
      const committed = await readBack(pool, inDoubt, { what, again: 'settle the event again' });
      if (committed) return committed;
      if (attempt >= MAX_UNKNOWN_OUTCOME_ATTEMPTS) throw error;
      await sleep(backoff(attempt, UNKNOWN_OUTCOME_BACKOFF));
    }
  }
}

/**
 * One decision inside the caller's transaction, for a caller whose own record must commit
 * with the effect (an operator's adjustment and its Idempotency-Key answer). Its key's
 * unique violation (SettlementKeyTaken) and a lost COMMIT are the caller's to handle.
 */
export async function settleWithin(tx: Queryable, request: SettleRequest): Promise<SettleResult> {
  return settleInTransaction(tx, request, { written: null, result: null });
}

/** Lock → decide → write, then move the accounts (docs/ARCHITECTURE.md "The flow"). */
async function settleInTransaction(tx: Queryable, request: SettleRequest, state: Attempt): Promise<SettleResult> {
  const job = await lockJob(tx, request.jobId, request.claim?.tenantId);
  if (!job) throw new JobNotFound(request.jobId);
  const [written] = await writeDecisions(tx, new Map([[job.row.id, job]]), [request]);
  state.written = written!.inserted.at(-1) ?? null;
  const [result] = await moveAccounts(tx, [written!]);
  failpoint('settle.before_commit');
  return result!;
}

/**
 * After SettlementKeyTaken (the intended constraint): the first writer's result, verified.
 * Under the job lock this only happens when the job row does not show an effect the
 * settlements table has; settling again then hits the same key, and the second time
 * that is reported instead of looping.
 */
async function existingResult(
  pool: Pool,
  request: SettleRequest,
  options: SettleOptions,
  key: string,
  afterDuplicate: boolean,
): Promise<SettleResult> {
  const existing = await findSettlement(pool, key);
  if (!existing) throw new SettlementMismatch(key, 'a unique violation was reported but no settlement has the key');
  const expected = parseSettlementKey(key);
  if (
    existing.job_id !== expected.jobId ||
    existing.tenant_id !== expected.tenantId ||
    existing.charge_type !== expected.chargeType ||
    existing.version !== expected.version
  ) {
    throw new SettlementMismatch(key, `it belongs to job ${existing.job_id}, ${existing.charge_type} version ${existing.version}`);
  }
  if (request.claim) {
    if (afterDuplicate) {
      throw new SettlementMismatch(key, `job ${request.jobId} does not reflect it; reconcile the job before settling this event`);
    }
    // The event itself must still be recorded: settle again on the committed state,
    // which now decides "no effect" and returns this same settlement.
    return settleOnce(pool, request, options, true);
  }
  const state = await pool.query<{ state: JobState }>('select state from jobs where id = $1', [request.jobId]);
  return { outcome: 'applied', alerts: [], jobState: state.rows[0]!.state, settlement: existing, replayed: true };
}
