import type { Pool, Queryable } from '../db/pool.js';
import { withTransaction } from '../db/transaction.js';
import { newId } from '../ids.js';
import { EXCEPTION_CLASSES, findInconsistencies, type CheckProgress, type ExceptionClass, type Finding } from './checks.js';
import { repair, type RepairAction, type RepairSettings } from './repair.js';
import { logRaisedExceptions } from './exception-log.js';
import type { DecisionLog } from '../ledger/index.js';

export interface ReconciliationException {
  id: string;
  class: ExceptionClass;
  objects: Record<string, unknown>;
  detail: Record<string, unknown>;
  first_seen_at: string;
  last_seen_at: string;
  resolved: boolean;
  resolution_note: string | null;
}

export interface ReconciliationRun {
  id: string;
  clean: boolean;
  repair: boolean;
  started_at: string;
  finished_at: string;
  /** open (unresolved) exceptions found by this run */
  exceptions: ReconciliationException[];
  /** exceptions found by this run that an operator already resolved */
  resolved_exceptions: ReconciliationException[];
  repairs: RepairAction[];
  /** only for a run limited to some classes (ReconcileOptions.classes) */
  classes?: ExceptionClass[];
}

export interface ReconcileOptions {
  /** repair what has a keyed repair, then look again */
  repair?: boolean;
  /** how repairs claim and settle an event (the command's lease and settle settings); the defaults when absent */
  repairWith?: RepairSettings;
  /**
   * Check only these classes (default: all). Exceptions of other classes are left as
   * they are — neither found nor cleared — so a frequent duty can run one cheap check
   * (e.g. hold_open_past_expiry, which CONTRACT wants raised within 10 s) without the
   * full scans.
   */
  classes?: readonly ExceptionClass[];
  /** where the run logs each exception it raises and each settlement its repairs write */
  log?: DecisionLog;
  /** told as each check starts and ends; `pass` is 'repair' for the look before repairing */
  onCheck?: (progress: CheckProgress & { pass: 'repair' | 'find' }) => void;
  /** checks run at once, each on a connection of the pool (default 1: a duty shares the pool with the worker) */
  concurrency?: number;
}

/**
 * One reconciliation run: find every inconsistency, repair what has a keyed repair
 * (when asked), look again, and store the run. The same inconsistency found again is
 * the same exception row (by fingerprint); one no longer found is marked cleared, and
 * one found again after it had cleared is open again (an operator's resolution covers
 * the occurrence they reviewed, not the next one). `clean` is true when no exception
 * found by this run is unresolved.
 */
export async function reconcile(pool: Pool, options: ReconcileOptions = {}): Promise<ReconciliationRun> {
  const id = newId();
  const startedAt = new Date();
  const classes = options.classes ?? EXCEPTION_CLASSES;
  let repairs: RepairAction[] = [];
  const onCheck = (pass: 'repair' | 'find') => (options.onCheck ? (progress: CheckProgress) => options.onCheck!({ ...progress, pass }) : undefined);
  const concurrency = options.concurrency ?? 1;
  if (options.repair)
    repairs = await repair(pool, await findInconsistencies(pool, classes, onCheck('repair'), concurrency), options.log, options.repairWith);
  const findings = await findInconsistencies(pool, classes, onCheck('find'), concurrency);
  let raised: ReconciliationException[] = [];
  const stored = await withTransaction(pool, async (tx) => {
    const { exceptions, raisedIds } = await recordFindings(tx, id, classes, findings);
    raised = exceptions.filter((e) => raisedIds.has(e.id));
    const open = exceptions.filter((e) => !e.resolved);
    const run: ReconciliationRun = {
      id,
      clean: open.length === 0,
      repair: options.repair ?? false,
      started_at: startedAt.toISOString(),
      finished_at: new Date().toISOString(),
      exceptions: open,
      resolved_exceptions: exceptions.filter((e) => e.resolved),
      repairs,
      ...(options.classes ? { classes: [...options.classes] } : {}),
    };
    // In the exceptions' transaction: a run is stored together with what it recorded.
    await tx.query(
      `insert into reconciliation_runs (id, repair, clean, started_at, finished_at, summary) values ($1, $2, $3, $4, $5, $6)`,
      [id, run.repair, run.clean, startedAt, run.finished_at, JSON.stringify(run)],
    );
    return run;
  });
  // After COMMIT: a line never names an exception whose run rolled back.
  if (options.log) logRaisedExceptions(options.log, id, raised);
  return stored;
}

interface ExceptionRow {
  id: string;
  class: ExceptionClass;
  objects: Record<string, unknown>;
  detail: Record<string, unknown>;
  first_seen_at: Date;
  last_seen_at: Date;
  resolved_at: Date | null;
  resolution_note: string | null;
}

/**
 * Upserts what the run found and clears what it no longer finds. `raisedIds`: the
 * exceptions this run raised — new, or found again after they had cleared — as opposed
 * to ones still open from an earlier run.
 */
async function recordFindings(
  tx: Queryable,
  runId: string,
  classes: readonly ExceptionClass[],
  unordered: Finding[],
): Promise<{ exceptions: ReconciliationException[]; raisedIds: Set<string> }> {
  // One order for every run, so two concurrent runs upsert the same rows in the same
  // order instead of deadlocking.
  const findings = [...unordered].sort((a, b) => (a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0));
  const stillOpen = await tx.query<{ id: string }>(
    'select id from reconciliation_exceptions where fingerprint = any($1::text[]) and cleared_at is null',
    [findings.map((f) => f.fingerprint)],
  );
  const rows = await tx.query<ExceptionRow>(
    `insert into reconciliation_exceptions (id, class, fingerprint, objects, detail, first_run_id, last_run_id)
     select f.id, f.class, f.fingerprint, f.objects, f.detail, $1, $1
     from unnest($2::uuid[], $3::text[], $4::text[], $5::jsonb[], $6::jsonb[]) as f(id, class, fingerprint, objects, detail)
     on conflict on constraint reconciliation_exceptions_fingerprint_key do update
       set last_run_id = excluded.last_run_id, last_seen_at = now(), detail = excluded.detail, cleared_at = null,
           -- found again after it had cleared: it happened again, and the earlier review does not cover it
           resolved_at = case when reconciliation_exceptions.cleared_at is null then reconciliation_exceptions.resolved_at end,
           resolution_note = case when reconciliation_exceptions.cleared_at is null then reconciliation_exceptions.resolution_note end
     returning id, class, objects, detail, first_seen_at, last_seen_at, resolved_at, resolution_note`,
    [
      runId,
      findings.map(() => newId()),
      findings.map((f) => f.class),
      findings.map((f) => f.fingerprint),
      findings.map((f) => JSON.stringify(f.objects)),
      findings.map((f) => JSON.stringify(f.detail)),
    ],
  );
  await tx.query(
    `update reconciliation_exceptions set cleared_at = now() where cleared_at is null and last_run_id <> $1 and class = any($2::text[])`,
    [runId, [...classes]],
  );
  const open = new Set(stillOpen.rows.map((r) => r.id));
  const exceptions = rows.rows
    .map((row) => ({
      id: row.id,
      class: row.class,
      objects: row.objects,
      detail: row.detail,
      first_seen_at: row.first_seen_at.toISOString(),
      last_seen_at: row.last_seen_at.toISOString(),
      resolved: row.resolved_at !== null,
      resolution_note: row.resolution_note,
    }))
    .sort((a, b) => a.class.localeCompare(b.class) || a.id.localeCompare(b.id));
  return { exceptions, raisedIds: new Set(exceptions.filter((e) => !open.has(e.id)).map((e) => e.id)) };
}

export async function findRun(db: Queryable, id: string): Promise<ReconciliationRun | null> {
  const result = await db.query<{ summary: ReconciliationRun }>('select summary from reconciliation_runs where id = $1', [id]);
  return result.rows[0]?.summary ?? null;
}

/** An operator's review: the exception no longer counts against `clean`. */
export async function resolveException(db: Queryable, id: string, note: string): Promise<ReconciliationException | null> {
  const result = await db.query<ExceptionRow>(
    `update reconciliation_exceptions set resolved_at = coalesce(resolved_at, now()), resolution_note = $2 where id = $1
     returning id, class, objects, detail, first_seen_at, last_seen_at, resolved_at, resolution_note`,
    [id, note],
  );
  const row = result.rows[0];
  if (!row) return null;
  return {
    id: row.id,
    class: row.class,
    objects: row.objects,
    detail: row.detail,
    first_seen_at: row.first_seen_at.toISOString(),
    last_seen_at: row.last_seen_at.toISOString(),
    resolved: true,
    resolution_note: row.resolution_note,
  };
}
