import type { Queryable } from '../db/pool.js';
import { keyset, type PageRequest } from '../db/keyset.js';
import type { PriceVersionRow } from './prices.js';

/** What GET /v1/prices may be narrowed by; null means "any". */
export interface PriceListFilter {
  model: string | null;
  currency: string | null;
  /** true: only each model and currency's current (highest) version; false: only superseded ones */
  current: boolean | null;
}

export type ListedPriceVersion = PriceVersionRow & { current: boolean };

/**
 * One page of price versions, newest published first (UUIDv7 ids), each saying whether
 * it is its model and currency's current version (the one a job submitted now pins);
 * `limit + 1` rows for pageOf.
 */
export async function listPriceVersions(db: Queryable, filter: PriceListFilter, page: PageRequest): Promise<ListedPriceVersion[]> {
  const values: unknown[] = [page.limit + 1, filter.model, filter.currency, filter.current];
  const { where, order } = keyset('id', page, values.length + 1);
  if (page.cursor) values.push(page.cursor.id);
  const result = await db.query<ListedPriceVersion>(
    `select * from (
       select p.*, not exists (
                select 1 from price_versions n where n.model = p.model and n.currency = p.currency and n.version > p.version
              ) as current
       from price_versions p
       where ($2::text is null or p.model = $2) and ($3::text is null or p.currency = $3)
     ) v
     where ($4::boolean is null or current = $4)
       and ${where}
     order by ${order}
     limit $1`,
    values,
  );
  return result.rows;
}
