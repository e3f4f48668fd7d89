import type { Queryable } from '../db/pool.js';
import { keyset, type PageRequest } from '../db/keyset.js';

/**
 * A tenant's API keys as stored: a SHA-256 of each key (the key itself is shown once, in
 * the answer that made it), a name, when it last authenticated, and when it was revoked.
 * Authentication itself reads this table in api/auth.ts.
 */
export interface ApiKeyRow {
  id: string;
  tenant_id: string;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS = 'id, tenant_id, name, created_at, last_used_at, revoked_at';

/** A new key of an existing tenant; null when the tenant does not exist (nothing written). */
export async function insertApiKey(db: Queryable, key: { id: string; tenantId: string; name: string; keyHash: Buffer }): Promise<ApiKeyRow | null> {
  const result = await db.query<ApiKeyRow>(
    `insert into api_keys (id, tenant_id, name, key_hash)
     select $1, t.id, $3, $4 from tenants t where t.id = $2
     returning ${COLUMNS}`,
    [key.id, key.tenantId, key.name, key.keyHash],
  );
  return result.rows[0] ?? null;
}

/**
 * One page of keys, newest first (UUIDv7 ids), revoked ones included; `limit + 1` rows,
 * for pageOf. A tenant's walk api_keys_tenant_id_idx; the admin's unfiltered one the
 * primary key.
 */
export async function listApiKeys(db: Queryable, tenantId: string | null, page: PageRequest): Promise<ApiKeyRow[]> {
  const values: unknown[] = [page.limit + 1, tenantId];
  const { where, order } = keyset('id', page, values.length + 1);
  if (page.cursor) values.push(page.cursor.id);
  const result = await db.query<ApiKeyRow>(
    `select ${COLUMNS} from api_keys
     where ($2::uuid is null or tenant_id = $2) and ${where}
     order by ${order}
     limit $1`,
    values,
  );
  return result.rows;
}

/**
 * Revokes a key (of the given tenant, or of any with null) and returns it; null when
 * there is no such key. A second revoke keeps the first revoked_at: under a concurrent
 * revoke this UPDATE waits for the other and re-reads its row, so both answer the same.
 * The next authentication with the key reads the committed row and is refused.
 */
export async function revokeApiKey(db: Queryable, id: string, tenantId: string | null): Promise<ApiKeyRow | null> {
  const result = await db.query<ApiKeyRow>(
    `update api_keys set revoked_at = coalesce(revoked_at, now())
     where id = $1 and ($2::uuid is null or tenant_id = $2)
     returning ${COLUMNS}`,
    [id, tenantId],
  );
  return result.rows[0] ?? null;
}
