import type { Queryable } from '../db/pool.js';
import { keyset, type PageRequest } from '../db/keyset.js';
import type { AccountRow } from './accounts.js';

/** What GET /v1/wallets may be narrowed by; null means "any". */
export interface WalletListFilter {
  tenantId: string | null;
  currency: string | null;
}

/** One page of wallets, newest first (UUIDv7 ids), `limit + 1` rows for pageOf. A read model. */
export async function listWalletPage(db: Queryable, filter: WalletListFilter, page: PageRequest): Promise<AccountRow[]> {
  const values: unknown[] = [page.limit + 1, filter.tenantId, filter.currency];
  const { where, order } = keyset('id', page, values.length + 1);
  if (page.cursor) values.push(page.cursor.id);
  const result = await db.query<AccountRow>(
    `select * from accounts
     where kind = 'wallet'
       and ($2::uuid is null or tenant_id = $2)
       and ($3::text is null or currency = $3)
       and ${where}
     order by ${order}
     limit $1`,
    values,
  );
  return result.rows;
}
