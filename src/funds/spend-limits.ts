import type { Queryable } from '../db/pool.js';
import { newId } from '../ids.js';
import { keyset, type PageRequest } from '../db/keyset.js';
import type { OverLimit } from './errors.js';

/**
 * Spend limits (migrations/0014): a tenant's ceiling per currency and UTC period (a day
 * or a month) on what its jobs may commit to. The period's spend is what captures and
 * adjustments posted in it, plus the holds still open of the jobs reserved in it: a
 * release gives its hold back, a capture keeps only what it charged. It is counted in
 * spend_periods by the statement that moves the wallet, and checked by the reservation's
 * statement on the counter as that statement wrote it (wallet-entries.ts), so no number
 * of concurrent reservations takes it past the limit. Captures and adjustments always
 * post (the work is done): a capture of a hold reserved in an earlier period counts in
 * its own period, and can take that period's spend past the limit; only reservations
 * are refused.
 */

/** A period a reservation counted in, as its statement left it, beside the tenant's limit for it (exact bigints as text). */
export interface PeriodWithLimit {
  period: SpendPeriod;
  limit: string;
  starts_on: string;
  /** the period's spend with the reservation */
  spent: string;
}

/**
 * The limit a reservation of `requested` took its period's spend past (the day's before
 * the month's), with what the period had spent before it; null when it stays within
 * every limit. Reaching a limit exactly is allowed.
 */
export function firstOverLimit(periods: readonly PeriodWithLimit[], requested: bigint): OverLimit | null {
  const over = periods
    .filter((p) => BigInt(p.spent) > BigInt(p.limit))
    .sort((a, b) => SPEND_PERIODS.indexOf(a.period) - SPEND_PERIODS.indexOf(b.period))[0];
  return over ? { period: over.period, limit: over.limit, starts_on: over.starts_on, spent: (BigInt(over.spent) - requested).toString() } : null;
}

export const SPEND_PERIODS = ['day', 'month'] as const;
export type SpendPeriod = (typeof SPEND_PERIODS)[number];

export interface SpendLimitRow {
  id: string;
  tenant_id: string;
  currency: string;
  period: SpendPeriod;
  amount: bigint;
  created_at: Date;
  updated_at: Date;
  /** the current period's first day (YYYY-MM-DD, UTC, by the database's clock) and its spend so far */
  starts_on: string;
  spent: bigint;
}

/** The limits with the current period of each (by the database's clock) and its spend. */
const WITH_CURRENT_SPEND = `
  select l.*, to_char(p.starts_on, 'YYYY-MM-DD') as starts_on, coalesce(s.spent, 0) as spent
  from spend_limits l
  cross join lateral (select case l.period when 'day' then (now() at time zone 'UTC')::date
                                           else date_trunc('month', now() at time zone 'UTC')::date end as starts_on) p
  left join spend_periods s on s.tenant_id = l.tenant_id and s.currency = l.currency and s.period = l.period and s.starts_on = p.starts_on`;

export interface PutSpendLimit {
  tenantId: string;
  currency: string;
  period: SpendPeriod;
  amount: bigint;
}

/** Sets the tenant's limit for a currency and period: created (true) or replaced. Null: no such tenant. */
export async function putSpendLimit(tx: Queryable, limit: PutSpendLimit): Promise<{ row: SpendLimitRow; created: boolean } | null> {
  const tenant = await tx.query('select 1 from tenants where id = $1', [limit.tenantId]);
  if (tenant.rowCount === 0) return null;
  const inserted = await tx.query<{ id: string }>(
    `insert into spend_limits (id, tenant_id, currency, period, amount) values ($1, $2, $3, $4, $5)
     on conflict on constraint spend_limits_tenant_currency_period_key do nothing returning id`,
    [newId(), limit.tenantId, limit.currency, limit.period, limit.amount.toString()],
  );
  let id = inserted.rows[0]?.id;
  const created = id !== undefined;
  if (!created) {
    // The limit exists (or did at the insert's snapshot): this one statement replaces it.
    const updated = await tx.query<{ id: string }>(
      `update spend_limits set amount = $4, updated_at = now() where tenant_id = $1 and currency = $2 and period = $3 returning id`,
      [limit.tenantId, limit.currency, limit.period, limit.amount.toString()],
    );
    id = updated.rows[0]?.id;
    if (id === undefined)
      throw new Error(
        `the ${limit.period} spend limit of tenant ${limit.tenantId} in ${limit.currency} was deleted while it was being replaced; send it again`,
      );
  }
  const row = await findSpendLimit(tx, limit.tenantId, id!);
  return { row: row!, created };
}

export async function findSpendLimit(db: Queryable, tenantId: string, id: string): Promise<SpendLimitRow | null> {
  const result = await db.query<SpendLimitRow>(`${WITH_CURRENT_SPEND} where l.tenant_id = $1 and l.id = $2`, [tenantId, id]);
  return result.rows[0] ?? null;
}

/** The tenant's limits, newest first, keyset-paged on id. */
export async function listSpendLimits(db: Queryable, tenantId: string, page: PageRequest): Promise<SpendLimitRow[]> {
  const { where, order } = keyset('l.id', page, 2);
  const values: unknown[] = [tenantId];
  if (page.cursor) values.push(page.cursor.id);
  const result = await db.query<SpendLimitRow>(
    `${WITH_CURRENT_SPEND} where l.tenant_id = $1 and ${where} order by ${order} limit ${page.limit + 1}`,
    values,
  );
  return result.rows;
}

/** Removes one limit (the spend goes on being counted). Null: the tenant has none with this id. */
export async function deleteSpendLimit(db: Queryable, tenantId: string, id: string): Promise<SpendLimitRow | null> {
  const result = await db.query<SpendLimitRow>(
    `with deleted as (delete from spend_limits where tenant_id = $1 and id = $2 returning *)
     ${WITH_CURRENT_SPEND.replace('from spend_limits l', 'from deleted l')}`,
    [tenantId, id],
  );
  return result.rows[0] ?? null;
}
