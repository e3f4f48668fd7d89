import type { Queryable } from '../db/pool.js';

/**
 * A new tenant with its first API key (named 'default' by the column's default), in the
 * caller's transaction: the key is shown once, in the answer that made both.
 */
export async function insertTenant(
  tx: Queryable,
  tenant: { id: string; name: string; metadata: Record<string, string>; apiKeyId: string; apiKeyHash: Buffer },
): Promise<void> {
  await tx.query('insert into tenants (id, name, metadata) values ($1, $2, $3)', [tenant.id, tenant.name, JSON.stringify(tenant.metadata)]);
  await tx.query('insert into api_keys (id, tenant_id, key_hash) values ($1, $2, $3)', [tenant.apiKeyId, tenant.id, tenant.apiKeyHash]);
}
