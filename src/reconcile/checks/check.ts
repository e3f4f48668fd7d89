import type { Queryable } from '../../db/pool.js';
import { SCALE } from '../../money/index.js';

/** Every exception class reconciliation reports (CONTRACT.md). */
export type ExceptionClass =
  | 'terminal_job_without_settlement'
  | 'settlement_without_entries'
  | 'hold_captured_and_released'
  | 'hold_open_past_expiry'
  | 'event_stuck'
  | 'event_dead'
  | 'projection_drift'
  | 'currency_sum_nonzero'
  | 'usage_mismatch'
  | 'event_key_conflict'
  | 'event_mismatch'
  | 'late_success_after_release'
  | 'late_usage_after_release'
  | 'usage_exceeds_reservation'
  | 'wallet_overdrawn'
  | 'running_balance_drift'
  | 'spend_period_drift'
  | 'grant_drift'
  | 'grant_expiry_overdue'
  | 'allocation_mismatch'
  | 'extension_mismatch'
  | 'payment_mismatch'
  | 'payment_not_credited'
  | 'payment_event_stuck'
  | 'recharge_unresolved';

export interface Finding {
  class: ExceptionClass;
  /** the same inconsistency found again has the same fingerprint: it is the same exception */
  fingerprint: string;
  objects: Record<string, unknown>;
  detail: Record<string, unknown>;
}

/** What a check finds: one row per inconsistency; the key makes the finding's fingerprint. */
export interface CheckRow {
  key: string;
  objects: Record<string, unknown>;
  detail: Record<string, unknown>;
}

/**
 * One class of inconsistency, found by one set-based query, over indexes where the table is
 * large — or, where money must be recomputed, by `find`: it loads the rows and lets the
 * posting module do the arithmetic (docs/ARCHITECTURE.md, funds/: nobody else adds up money, not a CTE).
 * Read-only: the repairs live in repair.ts and go through the normal keyed paths. A check
 * is listed once, in the registry (../checks.ts).
 */
export type Check = {
  class: ExceptionClass;
  /** the table whose rows the check reads through (what its progress says it covers) */
  covers: string;
} & (
  | {
      /** set-based SQL returning (key text, objects jsonb, detail jsonb) */
      sql: string;
    }
  | {
      /** reads what it needs (in one snapshot: checks/snapshot.ts) and returns what disagrees */
      find: (db: Queryable) => Promise<CheckRow[]>;
    }
);

/**
 * SQL for a bigint amount of micros as the wire's decimal string in major units, the
 * same form as formatAmount ("12.500000", "-0.006000"): a run's answer is part of the
 * HTTP API, where amounts are never raw micros.
 */
export function amount(expression: string): string {
  return `round((${expression})::numeric / ${10 ** SCALE}, ${SCALE})::text`;
}

/** Whole seconds from a timestamp to now (null for a null timestamp): an age in a run's detail. */
export function secondsSince(expression: string): string {
  return `floor(extract(epoch from now() - ${expression}))::bigint`;
}
