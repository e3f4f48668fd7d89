/**
 * ledger/: settling jobs — lock the job, decide, write the settlement, its entries (through
 * funds/), the hold, the job and the event's mark, in one short transaction
 * (docs/ARCHITECTURE.md, the folders of src/ and "The flow"). The door: the rest of src/
 * imports ledger/ only through this file (.dependency-cruiser.cjs, doors-only-ledger).
 *
 * Each operation with the refusals it can throw or return, as formance's ledger controller
 * lists its errors. The classes are ledger/errors.ts's (below) unless another folder is named:
 * funds/ for a wallet's money, lifecycle/ and pricing/ for what decide() cannot read,
 * queue/ for a claim, db/errors.ts for the database. "A bug" marks a refusal the caller's
 * own checks should have made impossible: it answers 500 and is never a client's mistake.
 */

/**
 * Submitting a job (jobs/submit.ts), both in the caller's transaction, the job first: a
 * refusal of either rolls the transaction back and nothing of the job is written.
 *
 * - insertJob(tx, job) → the job, state reserved.
 *   Throws: WalletNotFound (funds/: the wallet is not the tenant's, jobs_wallet_fkey);
 *   ProviderJobRefTaken (another tenant's job of the provider has the provider_job_ref);
 *   the database's unique violation on jobs_provider_job_ref_key (the tenant's own job has it).
 * - reserveHold(tx, request) → the hold. The only place funds are checked.
 *   Throws: WalletNotFound (funds/: no such wallet of the tenant in the job's currency);
 *   InsufficientFunds (funds/: the fundable grants cannot cover it); SpendLimitReached
 *   (funds/: the tenant's daily or monthly spend limit would be passed).
 *
 * Later, the provider's id for the job (api/routes/jobs.ts), in the caller's transaction:
 * - setProviderJobRef(tx, job, ref) → the job, or null: it has another ref already.
 *   Throws: ProviderJobRefTaken; the database's unique violation on
 *   jobs_provider_job_ref_key (another job of the tenant has the ref).
 *
 * When an event is discarded (jobs/discard.ts), in its transaction:
 * - resumeAbandonedFetch(tx, jobId) → whether the job moved: one left usage_pending by the
 *   event's fetch goes back where the fetch found it.
 */
export { insertJob, resumeAbandonedFetch, setProviderJobRef } from './job-writes.js';
export { reserveHold } from './hold.js';

/**
 * Settling an event of a job.
 *
 * - settle(pool, request, options) → SettleResult, in its own transaction (retried on
 *   40001/40P01: SerializationFailure, DeadlockDetected of db/ only once the retries are
 *   spent). What decide() said is a result, not a refusal: `outcome` applied,
 *   no_effect, stale or rejected (with `reason`); `replayed` when an equal event wrote the
 *   effect before.
 *   Throws: JobNotFound (no such job, or not the claim's tenant's); SettlementMismatch (a
 *   settlement with the key belongs to another job, phase or version, or the job does not
 *   reflect it: reconcile the job); OutcomeUnknown (the connection was lost around COMMIT
 *   and reading it back failed too: settle again later); ConnectionLost (db/: lost around
 *   COMMIT three times, not committed); LeaseLost (queue/: the request's claim is no longer
 *   current, nothing written); InvalidEventError, InvalidJobViewError (lifecycle/),
 *   InvalidUsageError (pricing/): an event or job decide() cannot read; PostingRefused
 *   (funds/: a bug).
 * - settleWithin(tx, request) → SettleResult, in the caller's transaction (an operator's
 *   adjustment, whose Idempotency-Key answer commits with it).
 *   Throws: JobNotFound; LeaseLost (with a claim); InvalidEventError, InvalidJobViewError,
 *   InvalidUsageError; PostingRefused (a bug); SettlementKeyTaken (ledger/errors.ts, not
 *   exported: no caller catches it) — a settlement with its key exists, and the caller's
 *   transaction is lost. No retry and no read-back: a lost COMMIT is the caller's.
 * - settleBatch(pool, requests) → one SettleResult per request, in one transaction; at
 *   most one event per job (RangeError otherwise: a bug). All or nothing: any refusal
 *   above rolls the whole batch back and is thrown, and the caller settles each event on
 *   its own with settle(), where its refusal stays its own. A lost COMMIT is read back:
 *   OutcomeUnknown, or ConnectionLost when it did not commit.
 * - settleTaken(pool, take) → what `take` took inside the transaction and its results:
 *   settleBatch for events locked by the transaction itself (`take` runs again on a retry).
 *   Throws: as settleBatch.
 * - logSettlementWritten(log, result, event?): the 'settlement written' line, only for a
 *   result settle() or settleBatch() returned (after COMMIT). Refuses nothing.
 */
export { settle, settleWithin, type SettleResult } from './settle.js';
export { settleBatch, settleTaken } from './settle-batch.js';
export { logSettlementWritten, type DecisionLog } from './settlement-log.js';

/**
 * A job's row under its lock, for the usage fetch's own writes (worker/usage-rows.ts).
 *
 * - lockJob(tx, jobId, tenantId?) → the locked job, or null: no such job (of the tenant).
 *   Throws: InvalidPolicyError (lifecycle/: its provider's stored policies cannot be read).
 * - writeJobs(tx, decided): what decide() said about each job itself, one statement.
 *   Refuses nothing.
 */
export { lockJob, writeJobs, type JobRow } from './locked-job.js';

/**
 * Growing a job's hold (CONTRACT.md "Long-running jobs: hold extensions"), under the job's
 * lock the caller took (lockJob), in its transaction. An event's extensions are held by
 * settle() itself.
 *
 * - holdExtension(tx, job, extension): the extension's reserve entries, record, the
 *   hold's new amount and job.hold_extended.
 *   Throws: InsufficientFunds, SpendLimitReached (funds/: refused, the caller rolls back;
 *   never for a terminal event's extension); WalletNotFound (funds/); PostingRefused (a bug).
 * - writeGrowth(tx, job, growth): the job's limits, reservation, usage so far, extension
 *   count, exhausted state and hold expiry, and job.hold_exhausted when it announces it.
 *   Refuses nothing.
 */
export { holdExtension } from './extend.js';
export { writeGrowth } from './locked-job.js';

/**
 * Reading settlements. None refuses anything: an unknown job or filter is an empty answer.
 *
 * - listSettlements(db, jobId): a job's settlements, oldest first.
 * - listSettlementPage(db, filter, page): GET /v1/settlements, newest first, `limit + 1` rows.
 * - settlementSeries(db, …), attentionCounts(db, tenantId): the console's overview.
 * - countSettlementsByChargeType(db): the tally_settlements gauge.
 */
export { listSettlements, type SettlementRow } from './settlements.js';
export { listSettlementPage } from './settlement-list.js';
export { attentionCounts, settlementSeries } from './overview.js';
export { countSettlementsByChargeType } from './settlement-counts.js';

/** The refusals of ledger/ that callers tell apart (each with a stable `code` but ProviderJobRefTaken). */
export { JobNotFound, JobTerminal, OutcomeUnknown, ProviderJobRefTaken, SettlementMismatch } from './errors.js';
