import type { Pool, Queryable } from '../db/pool.js';
import { ConnectionLost, isUniqueViolationOn } from '../db/errors.js';
import { withTransaction } from '../db/transaction.js';
import { failpoint } from '../failpoints.js';
import { decide, parseSettlementKey, settlementKey, type Decision, type JobState, type LifecycleEvent, type Outcome } from '../lifecycle/index.js';
import { lockJob, type LockedJob } from '../jobs/rows.js';
import { raiseAlerts, type AlertClass } from './alerts.js';
import { applyIntent } from './apply-intent.js';
import { JobNotFound, LeaseLost, OutcomeUnknown, SettlementMismatch } from './errors.js';
import { findResolvingSettlement, findSettlement, type SettlementRow } from './settlements.js';

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

const SETTLEMENT_KEY_CONSTRAINT = 'settlements_settlement_key_key';
/** Attempts after a COMMIT whose outcome was unknown and read back as not committed. */
const MAX_UNKNOWN_OUTCOME_ATTEMPTS = 3;

/**
 * One financial decision in one short transaction (DESIGN.md "The flow"): lock the
 * job, decide on the locked state, write the settlement, entries, projections, hold
 * and job, mark the event, commit. No I/O but this database inside.
 *
 * Outcomes: a unique violation on the settlement key returns the existing settlement
 * (after checking it is the same job, phase and version); 40001/40P01 retry the whole
 * transaction (withTransaction); a connection lost around COMMIT is resolved by
 * reading the key back before writing again; anything else is thrown.
 */
export async function settle(pool: Pool, request: SettleRequest): Promise<SettleResult> {
  for (let attempt = 1; ; attempt++) {
    const attempted: string[] = [];
    try {
      return await withTransaction(pool, (tx) => settleInTransaction(tx, request, attempted));
    } catch (error) {
      const duplicateKey = attempted.at(-1);
      if (duplicateKey && isUniqueViolationOn(error, SETTLEMENT_KEY_CONSTRAINT)) {
        return await existingResult(pool, request, duplicateKey);
      }
      if (!(error instanceof ConnectionLost)) throw error;
      const committed = await readBack(pool, request, attempted, error);
      if (committed) return committed;
      if (attempt >= MAX_UNKNOWN_OUTCOME_ATTEMPTS) throw error;
    }
  }
}

async function settleInTransaction(tx: Queryable, request: SettleRequest, attempted: string[]): Promise<SettleResult> {
  const job = await lockJob(tx, request.jobId);
  if (!job) throw new JobNotFound(request.jobId);
  const decision = decide(job.view, request.event, job.policy);
  const source = request.claim ? { provider: request.claim.provider, eventKey: request.claim.eventKey } : null;

  let settlement: SettlementRow | null = null;
  const alerts: { class: AlertClass; detail?: Record<string, unknown> }[] = decision.outcome.raises.map((a) => ({ class: a }));
  for (const intent of decision.intents) {
    attempted.push(intent.key);
    const applied = await applyIntent(tx, job, intent, source);
    settlement = applied.settlement;
    if (applied.walletBalance !== null && applied.walletBalance < 0n) {
      alerts.push({ class: 'wallet_overdrawn', detail: { wallet_id: job.row.wallet_id, balance: applied.walletBalance.toString() } });
    }
  }
  await updateJob(tx, job, decision);
  const alertSource = settlement?.settlement_key ?? (source ? `${source.provider}/${source.eventKey}` : `${request.jobId}:${request.event.type}`);
  await raiseAlerts(tx, alerts, { tenantId: job.row.tenant_id, jobId: job.row.id, source: alertSource });

  const replayed = settlement === null;
  settlement ??= await earlierEffect(tx, job, request.event);
  if (request.claim) await markEventSettled(tx, request.claim, decision, settlement?.settlement_key ?? null);
  failpoint('settle.before_commit');
  return {
    outcome: decision.outcome.status,
    ...(decision.outcome.reason ? { reason: decision.outcome.reason } : {}),
    alerts: alerts.map((a) => a.class),
    jobState: decision.nextState,
    settlement,
    replayed: replayed && settlement !== null,
  };
}

async function updateJob(tx: Queryable, job: LockedJob, decision: Decision): Promise<void> {
  let captured = job.row.captured;
  let released = job.row.released;
  let adjusted = job.row.adjusted;
  for (const intent of decision.intents) {
    if (intent.kind === 'capture') [captured, released] = [intent.amount, intent.remainder];
    if (intent.kind === 'release') [captured, released] = [0n, intent.amount];
    if (intent.kind === 'adjustment') adjusted += intent.amount;
  }
  const unchanged =
    decision.nextState === job.row.state &&
    captured === job.row.captured &&
    adjusted === job.row.adjusted &&
    decision.highestCorrection === job.row.highest_correction;
  if (unchanged) return;
  await tx.query(
    `update jobs set state = $2, captured = $3, released = $4, adjusted = $5, highest_correction = $6,
            cancel_requested_at = case when $2 = 'cancel_requested' then coalesce(cancel_requested_at, now()) else cancel_requested_at end,
            updated_at = now()
     where id = $1`,
    [job.row.id, decision.nextState, captured?.toString() ?? null, released?.toString() ?? null, adjusted.toString(), decision.highestCorrection],
  );
}

/**
 * The effect an equal event already produced, for an event that now has none: a
 * second completion returns the capture, a repeated correction its adjustment.
 */
async function earlierEffect(db: Queryable, job: LockedJob, event: LifecycleEvent): Promise<SettlementRow | null> {
  switch (event.type) {
    case 'job.completed':
    case 'job.failed':
    case 'job.canceled':
    case 'cancel.grace_elapsed':
    case 'hold.expired':
      return job.row.state === 'captured' || job.row.state === 'released' ? findResolvingSettlement(db, job.row.id) : null;
    case 'job.usage_corrected':
      return findSettlement(db, settlementKey(job.row.tenant_id, job.row.id, 'adjustment', event.correction));
    default:
      return null;
  }
}

/** Fenced: only the claim's current owner may record the outcome (else roll back). */
async function markEventSettled(tx: Queryable, claim: EventClaim, decision: Decision, settlementKey: string | null): Promise<void> {
  const state = decision.outcome.status === 'rejected' ? 'no_effect' : decision.outcome.status;
  const result = await tx.query(
    `update webhook_events
     set state = $4, reason = $5, settlement_key = $6, processed_at = now(), lease_until = null, last_error = null
     where provider = $1 and event_key = $2 and fencing_token = $3 and state = 'processing'`,
    [claim.provider, claim.eventKey, claim.fencingToken.toString(), state, decision.outcome.reason ?? null, settlementKey],
  );
  if (result.rowCount === 0) throw new LeaseLost(claim.provider, claim.eventKey);
}

/** After a unique violation on the settlement key: the first writer's result, verified. */
async function existingResult(pool: Pool, request: SettleRequest, key: string): Promise<SettleResult> {
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
    // The event itself must still be recorded: settle again on the committed state,
    // which now decides "no effect" and returns this same settlement.
    return settle(pool, request);
  }
  const state = await pool.query<{ state: JobState }>('select state from jobs where id = $1', [request.jobId]);
  return { outcome: 'applied', alerts: [], jobState: state.rows[0]!.state, settlement: existing, replayed: true };
}

/**
 * COMMIT may or may not have happened. Read on a fresh connection: if the settlement
 * this attempt wrote exists, the commit happened and its result stands; if not,
 * nothing was written and the caller may write again. A decision without a
 * settlement changes only state that decide() recomputes, so it is simply retried.
 */
async function readBack(pool: Pool, request: SettleRequest, attempted: string[], cause: Error): Promise<SettleResult | null> {
  const key = attempted.at(-1);
  if (!key) return null;
  let existing: SettlementRow | null;
  try {
    existing = await findSettlement(pool, key);
  } catch (error) {
    throw new OutcomeUnknown(`settlement ${key}: the connection was lost around COMMIT and the read-back failed too`, {
      cause: error ?? cause,
    });
  }
  if (!existing) return null;
  const state = await pool.query<{ state: JobState }>('select state from jobs where id = $1', [request.jobId]);
  return { outcome: 'applied', alerts: [], jobState: state.rows[0]!.state, settlement: existing, replayed: false };
}
