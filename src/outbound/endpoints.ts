import type { Queryable } from '../db/pool.js';
import { keyset, type PageRequest } from '../db/keyset.js';
import { holdDeliveriesSql } from './endpoint-holds.js';

/**
 * A tenant's webhook endpoints: where its messages go. Each statement is scoped by
 * `tenantId` when a tenant asks (null: the admin, any tenant's), so another tenant's
 * endpoint is "not found" like an unknown one. The secret is read only by the claim
 * (to sign) and shown only when made or rotated.
 */
export interface EndpointRow {
  id: string;
  tenant_id: string;
  url: string;
  events: string[];
  description: string | null;
  /** when the previous secret stops signing; null or past: no rotation in progress */
  previous_secret_expires_at: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  failing_since: Date | null;
  created_at: Date;
}

const COLUMNS = `id, tenant_id, url, events, description,
  case when previous_secret_expires_at > now() then previous_secret_expires_at end as previous_secret_expires_at,
  disabled_at, disabled_reason, failing_since, created_at`;

/** Null when the tenant does not exist. */
export async function insertEndpoint(
  db: Queryable,
  endpoint: { id: string; tenantId: string; url: string; events: readonly string[]; description: string | null; secret: string },
): Promise<EndpointRow | null> {
  const result = await db.query<EndpointRow>(
    `insert into webhook_endpoints (id, tenant_id, url, events, description, secret)
     select $1, t.id, $3, $4, $5, $6 from tenants t where t.id = $2
     returning ${COLUMNS}`,
    [endpoint.id, endpoint.tenantId, endpoint.url, endpoint.events, endpoint.description, endpoint.secret],
  );
  return result.rows[0] ?? null;
}

export async function getEndpoint(db: Queryable, id: string, tenantId: string | null): Promise<EndpointRow | null> {
  const result = await db.query<EndpointRow>(
    `select ${COLUMNS} from webhook_endpoints where id = $1 and ($2::uuid is null or tenant_id = $2)`,
    [id, tenantId],
  );
  return result.rows[0] ?? null;
}

/** One page, newest first (UUIDv7 ids), `limit + 1` rows for pageOf. */
export async function listEndpoints(db: Queryable, tenantId: string | null, page: PageRequest): Promise<EndpointRow[]> {
  const values: unknown[] = [page.limit + 1, tenantId];
  const { where, order } = keyset('id', page, values.length + 1);
  if (page.cursor) values.push(page.cursor.id);
  const result = await db.query<EndpointRow>(
    `select ${COLUMNS} from webhook_endpoints where ($2::uuid is null or tenant_id = $2) and ${where} order by ${order} limit $1`,
    values,
  );
  return result.rows;
}

export interface EndpointChange {
  events?: readonly string[];
  /** null clears it */
  description?: string | null;
  /** true disables (with `reason`); false enables again and starts its failure count afresh */
  disabled?: boolean;
  reason?: string;
}

export async function updateEndpoint(
  db: Queryable,
  id: string,
  tenantId: string | null,
  change: EndpointChange,
): Promise<EndpointRow | null> {
  const result = await db.query<EndpointRow>(
    `with changed as (
     update webhook_endpoints
     set events = coalesce($3, events),
         description = case when $4 then $5 else description end,
         disabled_at = case when $6::boolean is null then disabled_at when $6 then coalesce(disabled_at, now()) end,
         disabled_reason = case when $6::boolean is null then disabled_reason when $6 then coalesce(case when disabled_at is not null then disabled_reason end, $7) end,
         failing_since = case when $6 = false then null else failing_since end
     where id = $1 and ($2::uuid is null or tenant_id = $2)
     returning ${COLUMNS}
     ), held as (
       ${holdDeliveriesSql('changed.id', 'changed.disabled_at is not null', 'changed')} and $6::boolean is not null
     )
     select * from changed`,
    [
      id,
      tenantId,
      change.events ?? null,
      change.description !== undefined,
      change.description ?? null,
      change.disabled ?? null,
      change.reason ?? null,
    ],
  );
  return result.rows[0] ?? null;
}

/**
 * The new secret signs from now on; the one it replaces keeps signing beside it for
 * `graceSeconds` (0: not at all). A secret older than that is dropped: at most two sign.
 */
export async function rotateSecret(
  db: Queryable,
  id: string,
  tenantId: string | null,
  secret: string,
  graceSeconds: number,
): Promise<EndpointRow | null> {
  const result = await db.query<EndpointRow>(
    `update webhook_endpoints
     set previous_secret = case when $4 > 0 then secret end,
         previous_secret_expires_at = case when $4 > 0 then now() + make_interval(secs => $4) end,
         secret = $3
     where id = $1 and ($2::uuid is null or tenant_id = $2)
     returning ${COLUMNS}`,
    [id, tenantId, secret, graceSeconds],
  );
  return result.rows[0] ?? null;
}
