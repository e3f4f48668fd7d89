import type { Queryable } from '../db/pool.js';
import { alertChecks } from './checks/alerts.js';
import { allocationMismatch } from './checks/allocations.js';
import type { Check, CheckRow, ExceptionClass, Finding } from './checks/check.js';
import { extensionMismatch } from './checks/extensions.js';
import { eventDead, eventKeyConflict, eventMismatch, eventStuck } from './checks/events.js';
import { grantDrift, grantExpiryOverdue } from './checks/grants.js';
import { holdCapturedAndReleased, holdOpenPastExpiry } from './checks/holds.js';
import { paymentEventStuck, paymentMismatch, paymentNotCredited, rechargeUnresolved } from './checks/payments.js';
import { currencySumNonzero, projectionDrift, walletOverdrawn } from './checks/ledger-sums.js';
import { runningBalanceDrift } from './checks/running-balances.js';
import { settlementWithoutEntries, terminalJobWithoutSettlement } from './checks/settlements.js';
import { spendPeriodDrift } from './checks/spend-periods.js';
import { usageMismatch } from './checks/usage.js';

export type { ExceptionClass, Finding } from './checks/check.js';
export { EVENT_STUCK_SECONDS } from './checks/events.js';
export { projectionFromEntries } from '../funds/index.js';

/**
 * The registry: every check a run performs, in this order (also the order of
 * EXCEPTION_CLASSES, which the API lists). Each check lives with the others of its concept
 * in checks/; a new class is added to ExceptionClass (checks/check.ts) and listed here.
 */
const CHECKS: readonly Check[] = [
  terminalJobWithoutSettlement,
  settlementWithoutEntries,
  holdCapturedAndReleased,
  holdOpenPastExpiry,
  eventStuck,
  eventDead,
  projectionDrift,
  currencySumNonzero,
  usageMismatch,
  eventKeyConflict,
  eventMismatch,
  ...alertChecks,
  walletOverdrawn,
  runningBalanceDrift,
  spendPeriodDrift,
  grantDrift,
  grantExpiryOverdue,
  allocationMismatch,
  extensionMismatch,
  paymentMismatch,
  paymentNotCredited,
  paymentEventStuck,
  rechargeUnresolved,
];

export const EXCEPTION_CLASSES: readonly ExceptionClass[] = [...new Set(CHECKS.map((c) => c.class))];

/** One check starting or done, for a progress display (the CLI's, on stderr). */
export interface CheckProgress {
  class: ExceptionClass;
  /** 1-based place of the check in this pass, of `total` */
  index: number;
  total: number;
  phase: 'start' | 'done';
  /** the table the check reads through, and its row count as the planner estimates it */
  covers: { table: string; rows: number };
  /** done only: the check's own time and what it found */
  seconds?: number;
  found?: number;
}

/**
 * Every inconsistency of the given classes (all of them by default), one query per class.
 * `concurrency` > 1 runs that many checks at once, each on its own connection — only for
 * a pool (a single client would queue them); the findings come back in check order.
 */
export async function findInconsistencies(
  db: Queryable,
  classes: readonly ExceptionClass[] = EXCEPTION_CLASSES,
  onCheck?: (progress: CheckProgress) => void,
  concurrency = 1,
): Promise<Finding[]> {
  const checks = CHECKS.filter((c) => classes.includes(c.class));
  // Only for a display: the planner's estimate costs nothing, a count(*) would cost a scan.
  const estimates = new Map<string, number>();
  if (onCheck) {
    const tables = [...new Set(checks.map((c) => c.covers))];
    const result = await db.query<{ relname: string; rows: string }>(
      `select relname, greatest(reltuples, 0)::bigint::text as rows from pg_class where relkind = 'r' and relnamespace = current_schema()::regnamespace and relname = any($1)`,
      [tables],
    );
    for (const row of result.rows) estimates.set(row.relname, Number(row.rows));
  }
  const found: Finding[][] = checks.map(() => []);
  let next = 0;
  const lane = async () => {
    while (next < checks.length) {
      const i = next++;
      const check = checks[i]!;
      const covers = { table: check.covers, rows: estimates.get(check.covers) ?? 0 };
      const progress = { class: check.class, index: i + 1, total: checks.length, covers };
      onCheck?.({ ...progress, phase: 'start' });
      const started = performance.now();
      const rows = 'sql' in check ? (await db.query<CheckRow>(check.sql)).rows : await check.find(db);
      found[i] = rows.map((row) => ({
        class: check.class,
        fingerprint: `${check.class}:${row.key}`,
        objects: row.objects,
        detail: row.detail,
      }));
      onCheck?.({ ...progress, phase: 'done', seconds: (performance.now() - started) / 1000, found: rows.length });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, checks.length)) }, lane));
  return found.flat();
}
