import type { Queryable } from '../db/pool.js';
import { isUniqueViolationOn } from '../db/errors.js';
import { withSavepoint } from '../db/transaction.js';
import { newId } from '../ids.js';
import { formatAmount, parseAmount } from '../money/index.js';
import { sameUnitPrices, type PriceBook } from '../pricing/index.js';

export interface PriceVersionRow {
  id: string;
  model: string;
  currency: string;
  version: number;
  unit_prices: Record<string, string>;
  created_at: Date;
}

/** The longest model name (the column's check says the same). */
export const MODEL_NAME_MAX_LENGTH = 200;

export function priceBookOf(row: Pick<PriceVersionRow, 'id' | 'model' | 'currency' | 'version' | 'unit_prices'>): PriceBook {
  return {
    id: row.id,
    model: row.model,
    currency: row.currency,
    version: row.version,
    unitPrices: Object.fromEntries(
      Object.entries(row.unit_prices).map(([dimension, price]) => [dimension, parseAmount(price, { allowZero: true })]),
    ),
  };
}

/** Tries at the next version number before giving up: each lost try means another publisher's version committed. */
const MAX_PUBLISH_ATTEMPTS = 11;

/**
 * Publishes the next immutable version of a model's prices in a currency.
 * Publishers of the same model and currency queue on a transaction-scoped advisory
 * lock, so each computes max(version) + 1 after the previous one committed: without
 * it, N concurrent publishers retry up to N times each, and under load some ran out
 * of attempts. A unique violation on exactly the version constraint (a caller at
 * repeatable read, whose snapshot predates the other commit) still takes the next
 * number.
 */
export async function publishPriceVersion(
  tx: Queryable,
  model: string,
  currency: string,
  unitPrices: Record<string, bigint>,
): Promise<{ row: PriceVersionRow; created: boolean }> {
  const prices = Object.fromEntries(Object.entries(unitPrices).map(([d, p]) => [d, formatAmount(p)]));
  await tx.query(`select pg_advisory_xact_lock(hashtextextended('price_versions:' || $1 || ':' || $2, 0))`, [model, currency]);
  // Republishing the current prices is not a change: answer that version (CONTRACT "PUT /v1/prices").
  const current = await latestPriceVersion(tx, model, currency);
  if (current && sameUnitPrices(priceBookOf(current).unitPrices, unitPrices)) return { row: current, created: false };
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await withSavepoint(tx, 'publish_price', () =>
        tx.query<PriceVersionRow>(
          `insert into price_versions (id, model, currency, version, unit_prices)
           select $1, $2, $3, coalesce(max(version), 0) + 1, $4
           from price_versions where model = $2 and currency = $3
           returning *`,
          [newId(), model, currency, JSON.stringify(prices)],
        ),
      );
      return { row: result.rows[0]!, created: true };
    } catch (error) {
      if (!isUniqueViolationOn(error, 'price_versions_model_currency_version_key') || attempt >= MAX_PUBLISH_ATTEMPTS) throw error;
    }
  }
}

export async function latestPriceVersion(db: Queryable, model: string, currency: string): Promise<PriceVersionRow | null> {
  const result = await db.query<PriceVersionRow>(
    `select * from price_versions where model = $1 and currency = $2 order by version desc limit 1`,
    [model, currency],
  );
  return result.rows[0] ?? null;
}

/** The version number of a price version (a job's answer names the version it pinned). */
export async function priceVersionNumber(db: Queryable, id: string): Promise<number> {
  const result = await db.query<{ version: number }>('select version from price_versions where id = $1', [id]);
  return result.rows[0]!.version;
}
