import type { Pool, Queryable } from '../db/pool.js';
import { logSettlementWritten, settle, type DecisionLog } from '../ledger/index.js';
import { raiseAlerts } from '../alerts/index.js';
import { CREDIT_ROUTE, GRANT_ROUTE } from '../funds/index.js';
import { deleteExpiredIdempotencyKeys } from '../idempotency/keys.js';
import { DEFAULT_POLICY } from '../lifecycle/index.js';
import { awaitingSql } from '../queue/index.js';
import { reconcile } from '../reconcile/run.js';
import { DEFAULT_CONFIG, type Config } from '../config/index.js';
import { GRANT_SWEEP_BUDGET_MS, activateDueGrants, expireDueGrants } from './grant-duties.js';

/**
 * A duty is periodic work that must run once per interval across all workers together,
 * not once per worker: cancel grace, hold expiry, grants' activation and expiry
 * (grant-duties.ts), scheduled reconciliation, cleanup. Any
 * worker may run it; claimDuty decides which. The CLI builds this list's runner and hands
 * it to each Worker (worker/ knows nothing of what the duties are).
 */

type Duty = 'cancel_grace' | 'hold_expiry' | 'grant_activation' | 'grant_expiry' | 'idempotency_cleanup' | 'reconcile';

/** How often each periodic duty runs, in seconds, across all workers together. */
export type DutyIntervals = Readonly<Record<Duty, number>>;

/** The intervals by default; the command hands down TALLY_RECONCILE_INTERVAL_SECONDS (dutyIntervals). */
export const DUTY_INTERVAL_SECONDS: DutyIntervals = {
  cancel_grace: 2,
  hold_expiry: 5,
  // A scheduled grant brings its money, and an expired one's unheld remaining leaves,
  // within 10 s (CONTRACT.md "Credit grants"): workers offer duties every second.
  grant_activation: 2,
  grant_expiry: 2,
  idempotency_cleanup: 3600,
  // TALLY_RECONCILE_INTERVAL_SECONDS=0 turns scheduled reconciliation off.
  reconcile: DEFAULT_CONFIG.reconcileIntervalSeconds,
};

/** The intervals with the configuration's (TALLY_RECONCILE_INTERVAL_SECONDS). */
export function dutyIntervals(config: Pick<Config, 'reconcileIntervalSeconds'>): DutyIntervals {
  return { ...DUTY_INTERVAL_SECONDS, reconcile: config.reconcileIntervalSeconds };
}

/** Most jobs one run of a duty takes on (releases; holds flagged); the next run takes the rest. */
const DUTY_BATCH_LIMIT = 500;
const FLAG_BATCH_LIMIT = 1000;

/** How long idempotency records are kept (CONTRACT: at least 7 days; credits for ever). */
export const IDEMPOTENCY_RETENTION_DAYS = 30;

/**
 * Takes the duty if it is due: one conditional upsert, so however many workers ask,
 * one runs it per interval (a duty new to this build gets its row on first use).
 */
async function claimDuty(db: Queryable, name: Duty, intervals: DutyIntervals): Promise<boolean> {
  const result = await db.query(
    `insert into duties as d (name, last_run_at) values ($1, now())
     on conflict on constraint duties_pkey do update set last_run_at = now()
     where d.last_run_at <= now() - make_interval(secs => $2)`,
    [name, intervals[name]],
  );
  return result.rowCount === 1;
}

/** Runs each duty that is due, once across all workers (a command hands its workers this with its intervals). */
export async function runDueDuties(pool: Pool, log: DecisionLog, intervals: DutyIntervals = DUTY_INTERVAL_SECONDS): Promise<void> {
  if (await claimDuty(pool, 'cancel_grace', intervals)) {
    const released = await releaseAfterCancelGrace(pool, log);
    if (released > 0) log.info({ released }, 'released holds of jobs whose cancel grace passed');
  }
  if (await claimDuty(pool, 'hold_expiry', intervals)) {
    const flagged = await flagExpiredHolds(pool);
    if (flagged > 0)
      log.warn({ holds: flagged }, 'holds open past their expiry with no terminal event; tally reconcile --repair releases them');
  }
  // Activation first: a grant that took effect and expired while no worker ran brings its
  // money before its expiry takes the unheld part away (both keyed, each once).
  if (await claimDuty(pool, 'grant_activation', intervals)) await activateDueGrants(pool, { budgetMs: GRANT_SWEEP_BUDGET_MS, log });
  if (await claimDuty(pool, 'grant_expiry', intervals)) await expireDueGrants(pool, { budgetMs: GRANT_SWEEP_BUDGET_MS, log });
  if (intervals.reconcile > 0 && (await claimDuty(pool, 'reconcile', intervals))) {
    const run = await reconcile(pool, { log });
    const log_ = run.clean ? log.info.bind(log) : log.warn.bind(log);
    log_(
      { run: run.id, exceptions: run.exceptions.length },
      run.clean ? 'scheduled reconciliation: clean' : 'scheduled reconciliation found exceptions',
    );
  }
  if (await claimDuty(pool, 'idempotency_cleanup', intervals)) {
    // A credit's or a grant's record is kept for ever: its ledger key derives from the Idempotency-Key.
    await deleteExpiredIdempotencyKeys(pool, IDEMPOTENCY_RETENTION_DAYS, [CREDIT_ROUTE, GRANT_ROUTE]);
  }
}

/**
 * Jobs cancelled by their tenant whose provider's grace passed with no terminal
 * event: release. An accepted event still waiting to settle (or dead-lettered, which
 * an operator will retry) wins over the grace, so those jobs are skipped.
 */
export async function releaseAfterCancelGrace(pool: Pool, log?: Pick<DecisionLog, 'info'>): Promise<number> {
  const due = await pool.query<{ id: string }>(
    `select j.id from jobs j join providers p on p.name = j.provider
     where j.state = 'cancel_requested'
       and j.cancel_requested_at + make_interval(secs => coalesce((p.policies->>'cancel_grace_seconds')::int, $1)) <= now()
       and not exists (select 1 from webhook_events e where e.job_id = j.id and ${awaitingSql('e')})
     limit $2`,
    [DEFAULT_POLICY.cancelGraceSeconds, DUTY_BATCH_LIMIT],
  );
  let released = 0;
  for (const { id } of due.rows) {
    const result = await settle(pool, { jobId: id, event: { type: 'cancel.grace_elapsed' } });
    if (log) logSettlementWritten(log, result);
    if (result.outcome === 'applied' && result.jobState === 'released') released++;
  }
  return released;
}

/**
 * Raises hold_open_past_expiry on jobs whose hold outlived the provider's
 * hold_ttl_seconds with no terminal event, so the job view shows it within seconds.
 * Nothing is released here: that is an operator's repair (reconcile --repair).
 */
export async function flagExpiredHolds(pool: Pool): Promise<number> {
  const expired = await pool.query<{ job_id: string; tenant_id: string; expires_at: Date }>(
    `select h.job_id, h.tenant_id, h.expires_at from holds h
     where h.resolved_by is null and h.expires_at < now()
       and not exists (select 1 from alerts a where a.class = 'hold_open_past_expiry' and a.source = h.job_id::text)
     limit $1`,
    [FLAG_BATCH_LIMIT],
  );
  for (const hold of expired.rows) {
    await raiseAlerts(pool, [{ class: 'hold_open_past_expiry', detail: { expires_at: hold.expires_at.toISOString() } }], {
      tenantId: hold.tenant_id,
      jobId: hold.job_id,
      source: hold.job_id,
    });
  }
  return expired.rowCount ?? 0;
}
