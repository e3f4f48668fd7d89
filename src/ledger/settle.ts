import type { Pool, Queryable } from '../db/pool.js';
import { ConnectionLost, isUniqueViolationOn } from '../db/errors.js';
import { backoff, withTransaction, type TransactionOptions } from '../db/transaction.js';
import { failpoint } from '../failpoints.js';
import {
  decide,
  parseSettlementKey,
  settlementKey,
  type ChargeType,
  type Decision,
  type JobState,
  type LifecycleEvent,
  type Outcome,
  type ProviderPolicy,
} from '../lifecycle/index.js';
import { lockJob, lockJobs, type LockedJob } from '../jobs/rows.js';
import { raiseAlerts, type AlertClass } from './alerts.js';
import { applyIntent } from './apply-intent.js';
import { JobNotFound, LeaseLost, OutcomeUnknown, SettlementMismatch } from './errors.js';
import { findResolvingSettlement, findSettlement, type SettlementRow } from './settlements.js';
import { moveProjections, type Transfer } from './transfers.js';

/** The webhook event being settled, as claimed by a worker. */
export interface EventClaim {
  provider: string;
  eventKey: string;
  fencingToken: bigint;
}

export interface SettleRequest {
  jobId: string;
  event: LifecycleEvent;
  claim?: EventClaim;
}

export interface SettleResult {
  outcome: Outcome['status'];
  reason?: string;
  alerts: AlertClass[];
  jobState: JobState;
  /** This event's financial effect: written now, or written before by an equal event. */
  settlement: SettlementRow | null;
  /** true when the effect existed already and this call wrote none. */
  replayed: boolean;
}

export interface SettleOptions {
  /** called before each whole-transaction retry after 40001/40P01 (metrics, tests) */
  onRetry?: TransactionOptions['onRetry'];
}

const SETTLEMENT_KEY_CONSTRAINT = 'settlements_settlement_key_key';
/** Attempts after a connection loss whose transaction read back as not committed. */
const MAX_UNKNOWN_OUTCOME_ATTEMPTS = 3;
const UNKNOWN_OUTCOME_BACKOFF = { minDelayMs: 20, maxDelayMs: 500 } as const;

/**
 * What one attempt of the transaction got to, so that a failure can be told apart:
 * which settlement key it tried to insert, the row it inserted (its id tells our
 * commit from somebody else's), and the result it was about to commit.
 */
interface Attempt {
  intendedKey: string | null;
  written: SettlementRow | null;
  result: SettleResult | null;
}

/**
 * One financial decision in one short transaction (DESIGN.md "The flow"): lock the
 * job, decide on the locked state, write the settlement, entries, hold and job, mark
 * the event, move the account projections, commit. No I/O but this database inside.
 *
 * Outcomes: a unique violation on the settlement key returns the existing settlement
 * (after checking it is the same job, phase and version); 40001/40P01 retry the whole
 * transaction (withTransaction); a connection lost around COMMIT is resolved by
 * reading this attempt's own write back before writing again; anything else is thrown.
 */
export async function settle(pool: Pool, request: SettleRequest, options: SettleOptions = {}): Promise<SettleResult> {
  return settleOnce(pool, request, options, false);
}

async function settleOnce(pool: Pool, request: SettleRequest, options: SettleOptions, afterDuplicate: boolean): Promise<SettleResult> {
  for (let attempt = 1; ; attempt++) {
    const state: Attempt = { intendedKey: null, written: null, result: null };
    try {
      return await withTransaction(
        pool,
        async (tx) => {
          // withTransaction may run this again after 40001/40P01: start clean each time.
          Object.assign(state, { intendedKey: null, written: null, result: null });
          state.result = await settleInTransaction(tx, request, state);
          return state.result;
        },
        options.onRetry ? { onRetry: options.onRetry } : {},
      );
    } catch (error) {
      if (state.intendedKey && isUniqueViolationOn(error, SETTLEMENT_KEY_CONSTRAINT)) {
        return await existingResult(pool, request, options, state.intendedKey, afterDuplicate);
      }
      if (!(error instanceof ConnectionLost)) throw error;
      const committed = await readBack(pool, request, state);
      if (committed) return committed;
      if (attempt >= MAX_UNKNOWN_OUTCOME_ATTEMPTS) throw error;
      await sleep(backoff(attempt, UNKNOWN_OUTCOME_BACKOFF.minDelayMs, UNKNOWN_OUTCOME_BACKOFF.maxDelayMs));
    }
  }
}

async function settleInTransaction(tx: Queryable, request: SettleRequest, state: Attempt): Promise<SettleResult> {
  const job = await lockJob(tx, request.jobId);
  if (!job) throw new JobNotFound(request.jobId);
  const written = await writeDecision(tx, job, request, state);
  const [result] = await moveAccounts(tx, [written]);
  failpoint('settle.before_commit');
  return result!;
}

/**
 * Settles the claimed events of several jobs in ONE transaction: the jobs locked in id
 * order, each event decided and written as settle() would, then every touched account
 * moved once, wallets before revenue accounts, each set in id order (DESIGN.md's one
 * lock order), and one COMMIT. The hot wallet row is then updated once per batch
 * instead of once per event. All or nothing: if any event fails — a unique violation, a
 * lost claim, a bad event — the whole batch rolls back and the caller settles each event
 * on its own with settle(), where its failure stays its own. At most one event per job.
 * A connection lost around COMMIT is read back as settle() does (readBackBatch): a
 * committed batch returns its results, one that did not throws the ConnectionLost.
 */
export async function settleBatch(pool: Pool, requests: (SettleRequest & { claim: EventClaim })[]): Promise<SettleResult[]> {
  const jobIds = requests.map((r) => r.jobId);
  if (new Set(jobIds).size !== jobIds.length) throw new RangeError('a batch holds at most one event per job');
  const attempt: BatchAttempt = { written: [], results: null };
  try {
    return await withTransaction(pool, async (tx) => {
      // withTransaction may run this again after 40001/40P01: start clean each time.
      Object.assign(attempt, { written: [], results: null });
      const jobs = await lockJobs(tx, jobIds);
      const written: Written[] = [];
      for (const request of requests) {
        const job = jobs.get(request.jobId);
        if (!job) throw new JobNotFound(request.jobId);
        const state: Attempt = { intendedKey: null, written: null, result: null };
        written.push(await writeDecision(tx, job, request, state));
        attempt.written.push({ claim: request.claim, settlement: state.written });
      }
      attempt.results = await moveAccounts(tx, written);
      failpoint('settle.before_commit');
      return attempt.results;
    });
  } catch (error) {
    if (!(error instanceof ConnectionLost)) throw error;
    const committed = await readBackBatch(pool, jobIds, attempt);
    if (committed) return committed;
    // Not committed: nothing of the batch was written, and the caller settles each
    // event on its own (worker/settle-event.ts).
    throw error;
  }
}

/** What one attempt of a batch wrote, to tell after a lost COMMIT whether it committed. */
interface BatchAttempt {
  /** per event: its claim and the settlement row this attempt inserted (null: none) */
  written: { claim: EventClaim; settlement: SettlementRow | null }[];
  /** set once every statement ran: only then can COMMIT have been sent */
  results: SettleResult[] | null;
}

/**
 * The batch's connection broke. As settle()'s readBack: if the attempt never reached
 * COMMIT it cannot have committed (null). Otherwise wait, on a fresh connection, for the
 * in-doubt transaction to end — it holds every job row of the batch — then look for one
 * write only that transaction could have made: a settlement row with the id it inserted,
 * or an event marked under its claim's fencing token. The batch is all or nothing, so
 * one probe answers for all of it: found, its results stand; not found, nothing of it
 * was written (null). Reading back failing too is OutcomeUnknown.
 */
async function readBackBatch(pool: Pool, jobIds: string[], attempt: BatchAttempt): Promise<SettleResult[] | null> {
  const results = attempt.results;
  if (!results) return null;
  const probe = attempt.written.find((w) => w.settlement !== null) ?? attempt.written[0];
  if (!probe) return null;
  try {
    return await withTransaction(
      pool,
      async (tx) => {
        await tx.query('select 1 from jobs where id = any($1::uuid[]) order by id for share', [jobIds]);
        return (await committedWrite(tx, probe.settlement, probe.claim)) ? results : null;
      },
      { maxAttempts: 1 },
    );
  } catch (error) {
    throw new OutcomeUnknown(
      `a batch of ${jobIds.length} events: the connection was lost around COMMIT and reading it back failed too; settle its events again once the database answers`,
      { cause: error },
    );
  }
}

/** One decision, written, with the account projections still to move. */
interface Written {
  request: SettleRequest;
  job: LockedJob;
  decision: Decision;
  /** this event's effect: written now, or by an equal event before */
  settlement: SettlementRow | null;
  replayed: boolean;
  transfers: Transfer[];
  revenueAccount: string | null;
  charges: boolean;
}

/**
 * Decides on the locked job and writes everything but the account projections: the
 * settlement, entries, hold, job and the event's outcome (fenced by its claim).
 */
async function writeDecision(tx: Queryable, job: LockedJob, request: SettleRequest, state: Attempt): Promise<Written> {
  const decision = (await eventWaiting(tx, job, request.event)) ? waitForEvent(job) : decide(job.view, request.event, job.policy);
  const source = request.claim ? { provider: request.claim.provider, eventKey: request.claim.eventKey } : null;

  let settlement: SettlementRow | null = null;
  const transfers: Transfer[] = [];
  let revenueAccount: string | null = null;
  let charges = false;
  for (const intent of decision.intents) {
    state.intendedKey = intent.key;
    const applied = await applyIntent(tx, job, intent, source);
    settlement = state.written = applied.settlement;
    transfers.push(...applied.transfers);
    revenueAccount = applied.lockOrder[1] ?? null;
    charges ||= applied.charges;
  }
  await updateJob(tx, job, decision, request.event);
  const replayed = settlement === null;
  settlement ??= await earlierEffect(tx, job, request.event);
  if (request.claim) await markEventSettled(tx, request.claim, decision, settlement?.settlement_key ?? null);
  return { request, job, decision, settlement, replayed: replayed && settlement !== null, transfers, revenueAccount, charges };
}

/**
 * Moves the account projections of everything written, then raises the alerts that
 * depend on the resulting balances. The wallet and revenue rows are the hot rows every
 * settlement of a wallet (and of a tenant) queues on, so they are updated last: their
 * locks are held for these statements and COMMIT only, not for the whole transaction.
 */
async function moveAccounts(tx: Queryable, written: Written[]): Promise<SettleResult[]> {
  const wallets = [...new Set(written.map((w) => w.job.row.wallet_id))].sort();
  const revenues = [...new Set(written.flatMap((w) => (w.revenueAccount ? [w.revenueAccount] : [])))].sort();
  const balances = await moveProjections(
    tx,
    written.flatMap((w) => w.transfers),
    [...wallets, ...revenues],
  );
  const balanceAfter = balancesAfterEach(written, balances);
  const results: SettleResult[] = [];
  for (const [i, w] of written.entries()) {
    const { job, decision, request } = w;
    const alerts: { class: AlertClass; detail?: Record<string, unknown> }[] = decision.outcome.raises.map((a) => ({ class: a }));
    const walletBalance = balanceAfter[i];
    if (w.charges && walletBalance !== undefined && walletBalance < 0n) {
      const event = request.claim ? { provider: request.claim.provider, event_key: request.claim.eventKey } : {};
      alerts.push({ class: 'wallet_overdrawn', detail: { wallet_id: job.row.wallet_id, balance: walletBalance.toString(), ...event } });
    }
    const source = request.claim ? `${request.claim.provider}/${request.claim.eventKey}` : `${request.jobId}:${request.event.type}`;
    const alertSource = (!w.replayed && w.settlement?.settlement_key) || source;
    await raiseAlerts(tx, alerts, { tenantId: job.row.tenant_id, jobId: job.row.id, source: alertSource });
    results.push({
      outcome: decision.outcome.status,
      ...(decision.outcome.reason ? { reason: decision.outcome.reason } : {}),
      alerts: alerts.map((a) => a.class),
      jobState: decision.nextState,
      settlement: w.settlement,
      replayed: w.replayed,
    });
  }
  return results;
}

/**
 * Each decision's wallet balance as if the batch had been settled one event at a time,
 * in its order: the balance after the whole batch minus what the later decisions moved.
 * So wallet_overdrawn is raised by the events whose charge left the wallet below zero —
 * naming the one that overdrew it, not every charge of the batch (issue 11.8) — exactly
 * as settle() raises it for the same events one by one.
 */
function balancesAfterEach(written: Written[], balances: Map<string, bigint>): (bigint | undefined)[] {
  const after = new Map(balances);
  const result: (bigint | undefined)[] = new Array(written.length);
  for (let i = written.length - 1; i >= 0; i--) {
    const wallet = written[i]!.job.row.wallet_id;
    const balance = after.get(wallet);
    result[i] = balance;
    if (balance !== undefined) after.set(wallet, balance - postedChange(written[i]!.transfers, wallet));
  }
  return result;
}

/** How `transfers` move `account`'s posted balance (credits − debits); pending moves none. */
function postedChange(transfers: Transfer[], account: string): bigint {
  let change = 0n;
  for (const t of transfers) {
    if (t.flags !== 'posted' && t.flags !== 'post_pending') continue;
    if (t.creditAccountId === account) change += t.amount;
    if (t.debitAccountId === account) change -= t.amount;
  }
  return change;
}

/**
 * An accepted event still waiting to settle (or dead-lettered, for an operator to
 * retry) wins over the cancel grace and over a hold's expiry. Checked here, under the
 * job's row lock, because intake numbers a job's events under that same lock: no event
 * can be accepted between this check and the release.
 */
async function eventWaiting(tx: Queryable, job: LockedJob, event: LifecycleEvent): Promise<boolean> {
  if (event.type !== 'cancel.grace_elapsed' && event.type !== 'hold.expired') return false;
  const waiting = await tx.query({
    name: 'event_waiting',
    text: `select 1 from webhook_events where job_id = $1 and state in ('pending', 'processing', 'dead') limit 1`,
    values: [job.row.id],
  });
  return waiting.rowCount !== 0;
}

function waitForEvent(job: LockedJob): Decision {
  return {
    nextState: job.row.state,
    intents: [],
    outcome: { status: 'no_effect', reason: 'event_pending', raises: [] },
    highestCorrection: job.row.highest_correction,
  };
}

async function updateJob(tx: Queryable, job: LockedJob, decision: Decision, event: LifecycleEvent): Promise<void> {
  let captured = job.row.captured;
  let released = job.row.released;
  let adjusted = job.row.adjusted;
  for (const intent of decision.intents) {
    if (intent.kind === 'capture') [captured, released] = [intent.amount, intent.remainder];
    if (intent.kind === 'release') [captured, released] = [0n, intent.amount];
    if (intent.kind === 'adjustment') adjusted += intent.amount;
  }
  // A tenant's cancel is recorded even when the job stays where it is (usage_pending):
  // if the fetched usage turns out not to belong to the job, the cancel still stands.
  const recordsCancel = event.type === 'cancel.requested' && decision.outcome.status === 'applied' && job.row.cancel_requested_at === null;
  const unchanged =
    decision.nextState === job.row.state &&
    captured === job.row.captured &&
    adjusted === job.row.adjusted &&
    decision.highestCorrection === job.row.highest_correction &&
    !recordsCancel;
  if (unchanged) return;
  await tx.query({
    name: 'update_job',
    text: `update jobs set state = $2, captured = $3, released = $4, adjusted = $5, highest_correction = $6,
            cancel_requested_at = case when $2 = 'cancel_requested' or $7 then coalesce(cancel_requested_at, now()) else cancel_requested_at end,
            updated_at = now()
     where id = $1`,
    values: [
      job.row.id,
      decision.nextState,
      captured?.toString() ?? null,
      released?.toString() ?? null,
      adjusted.toString(),
      decision.highestCorrection,
      recordsCancel,
    ],
  });
}

/**
 * The effect an equal event already produced, for an event that now has none: a
 * second completion returns the capture, a repeated correction its adjustment. An
 * event of another phase (a failure after the capture, a completion after the
 * release) has no effect of its own, so it returns none: the winner's settlement is
 * not this event's effect.
 */
async function earlierEffect(db: Queryable, job: LockedJob, event: LifecycleEvent): Promise<SettlementRow | null> {
  if (event.type === 'job.usage_corrected') {
    return findSettlement(db, settlementKey(job.row.tenant_id, job.row.id, 'adjustment', event.correction));
  }
  const phase = resolvingPhase(event, job.policy);
  if (phase === null || (job.row.state !== 'captured' && job.row.state !== 'released')) return null;
  const resolving = await findResolvingSettlement(db, job.row.id);
  return resolving?.charge_type === phase ? resolving : null;
}

/** The charge type an event resolves an open hold with (CONTRACT "Job states and events"). */
function resolvingPhase(event: LifecycleEvent, policy: ProviderPolicy): ChargeType | null {
  switch (event.type) {
    case 'job.completed':
      return 'capture';
    case 'job.failed':
      return policy.failedWithUsage === 'capture' && event.usage !== undefined ? 'capture' : 'release';
    case 'job.canceled':
      return event.usage !== undefined ? 'capture' : 'release';
    case 'cancel.grace_elapsed':
    case 'hold.expired':
      return 'release';
    default:
      return null;
  }
}

/** Fenced: only the claim's current owner may record the outcome (else roll back). */
async function markEventSettled(tx: Queryable, claim: EventClaim, decision: Decision, settlementKey: string | null): Promise<void> {
  const state = decision.outcome.status === 'rejected' ? 'no_effect' : decision.outcome.status;
  const result = await tx.query({
    name: 'mark_event_settled',
    text: `update webhook_events
     set state = $4, reason = $5, settlement_key = $6, processed_at = now(), lease_until = null, last_error = null
     where provider = $1 and event_key = $2 and fencing_token = $3 and state = 'processing'`,
    values: [claim.provider, claim.eventKey, claim.fencingToken.toString(), state, decision.outcome.reason ?? null, settlementKey],
  });
  if (result.rowCount === 0) throw new LeaseLost(claim.provider, claim.eventKey);
}

/**
 * After a unique violation on the settlement key: the first writer's result, verified.
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

/**
 * The connection broke. If the attempt never got as far as COMMIT it cannot have
 * committed, and settling again is safe (the retry's job lock waits for the dead
 * session to end). Otherwise COMMIT may or may not have happened: on a fresh
 * connection, first wait for the in-doubt transaction to end — it holds the job's row
 * lock until its backend is gone — then look for what only that transaction could
 * have written: the settlement row with the id it inserted, or (for a decision with no
 * settlement) the claimed event marked under this claim's fencing token. Found means
 * committed, and the attempt's own result stands. Not found means not committed:
 * return null and the caller writes again. A decision with neither changes only state
 * that decide() recomputes, so it is simply settled again.
 */
async function readBack(pool: Pool, request: SettleRequest, attempt: Attempt): Promise<SettleResult | null> {
  const result = attempt.result;
  if (!result) return null;
  const written = attempt.written;
  const claim = request.claim;
  if (!written && !claim) return null;
  try {
    return await withTransaction(
      pool,
      async (tx) => {
        await tx.query('select 1 from jobs where id = $1 for share', [request.jobId]);
        return (await committedWrite(tx, written, claim)) ? result : null;
      },
      { maxAttempts: 1 },
    );
  } catch (error) {
    const what = written ? `settlement ${written.settlement_key}` : `event ${claim!.provider}/${claim!.eventKey}`;
    throw new OutcomeUnknown(
      `${what}: the connection was lost around COMMIT and reading it back failed too; settle the event again once the database answers`,
      { cause: error },
    );
  }
}

/**
 * After the in-doubt transaction has ended (the caller waited on its job rows): whether
 * it committed, told by a write only it could have made — the settlement row with the id
 * it inserted, or else its claim's event marked under the claim's fencing token.
 */
async function committedWrite(tx: Queryable, settlement: SettlementRow | null, claim: EventClaim | undefined): Promise<boolean> {
  if (settlement) return (await findSettlement(tx, settlement.settlement_key))?.id === settlement.id;
  if (!claim) return false;
  const event = await tx.query<{ state: string; fencing_token: bigint }>(
    'select state, fencing_token from webhook_events where provider = $1 and event_key = $2',
    [claim.provider, claim.eventKey],
  );
  const row = event.rows[0];
  return row !== undefined && row.fencing_token === claim.fencingToken && row.state !== 'processing';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
