import type { Queryable } from '../db/pool.js';
import { keyset, type PageRequest } from '../db/keyset.js';
import type { ProviderRow } from './providers.js';

/** Newest registered first; the name (the primary key) breaks ties of one instant. */
const ORDER_KEY = ['created_at', 'name'] as const;

/**
 * One page of providers, `limit + 1` rows for pageOf; the cursor id is a provider's name.
 * Null when the cursor names no provider. The creation instant is compared in SQL with
 * its microseconds (a JavaScript Date keeps milliseconds only).
 */
export async function listProviders(db: Queryable, page: PageRequest): Promise<ProviderRow[] | null> {
  let position: unknown[] = [];
  if (page.cursor) {
    const found = await db.query<{ created_at: string }>(
      `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created_at from providers where name = $1`,
      [page.cursor.id],
    );
    if (found.rows.length === 0) return null;
    position = [found.rows[0]!.created_at, page.cursor.id];
  }
  const values: unknown[] = [page.limit + 1];
  const { where, order } = keyset(ORDER_KEY, page, values.length + 1);
  values.push(...position);
  const result = await db.query<ProviderRow>(`select * from providers where ${where} order by ${order} limit $1`, values);
  return result.rows;
}
