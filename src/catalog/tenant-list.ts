import type { Queryable } from '../db/pool.js';
import { keyset, type PageRequest } from '../db/keyset.js';

/** A tenant as the operator sees it (its API keys are only ever stored hashed, and not here). */
export interface TenantRow {
  id: string;
  name: string;
  metadata: Record<string, string>;
  created_at: Date;
}

export async function findTenant(db: Queryable, id: string): Promise<TenantRow | null> {
  const result = await db.query<TenantRow>('select id, name, metadata, created_at from tenants where id = $1', [id]);
  return result.rows[0] ?? null;
}

/** One page of tenants, newest first (UUIDv7 ids), `limit + 1` rows for pageOf. */
export async function listTenants(db: Queryable, page: PageRequest): Promise<TenantRow[]> {
  const values: unknown[] = [page.limit + 1];
  const { where, order } = keyset('id', page, values.length + 1);
  if (page.cursor) values.push(page.cursor.id);
  const result = await db.query<TenantRow>(`select id, name, metadata, created_at from tenants where ${where} order by ${order} limit $1`, values);
  return result.rows;
}

/** How many tenants and wallets there are: what `serve` says at start (a first step only for an empty database). */
export async function countTenantsAndWallets(db: Queryable): Promise<{ tenants: number; wallets: number }> {
  const result = await db.query<{ tenants: number; wallets: number }>(
    `select (select count(*)::int from tenants) as tenants,
            (select count(*)::int from accounts where kind = 'wallet') as wallets`,
  );
  return result.rows[0]!;
}
