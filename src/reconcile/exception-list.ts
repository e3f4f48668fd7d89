import type { Queryable } from '../db/pool.js';
import { keyset, type PageRequest } from '../db/keyset.js';
import type { ExceptionClass } from './checks.js';

/**
 * Where an exception stands: `open` (found by the latest run that looked, not reviewed),
 * `resolved` (an operator reviewed it), `cleared` (a later run no longer found it, before
 * anyone reviewed it). Found again after clearing, it is open again.
 */
export const EXCEPTION_STATUSES = ['open', 'resolved', 'cleared'] as const;
export type ExceptionStatus = (typeof EXCEPTION_STATUSES)[number];

/** What GET /v1/reconciliation/exceptions may be narrowed by; null means "any". */
export interface ExceptionListFilter {
  exceptionClass: ExceptionClass | null;
  status: ExceptionStatus | null;
  tenantId: string | null;
}

export interface ListedException {
  id: string;
  class: ExceptionClass;
  objects: Record<string, unknown>;
  detail: Record<string, unknown> | null;
  status: ExceptionStatus;
  /** the tenant of the job, wallet or account the exception names; null for one about no tenant (currency_sum_nonzero) */
  tenant_id: string | null;
  first_seen_at: Date;
  last_seen_at: Date;
  cleared_at: Date | null;
  resolved_at: Date | null;
  resolution_note: string | null;
}

/**
 * One page of reconciliation exceptions, newest first (UUIDv7 ids, made when an
 * inconsistency is first found), `limit + 1` rows for pageOf. Exceptions name their
 * objects, not always their tenant: it is taken from the objects, or from the job or
 * account they name.
 */
export async function listExceptions(db: Queryable, filter: ExceptionListFilter, page: PageRequest): Promise<ListedException[]> {
  const values: unknown[] = [page.limit + 1, filter.exceptionClass, filter.status, filter.tenantId];
  const { where, order } = keyset('id', page, values.length + 1);
  if (page.cursor) values.push(page.cursor.id);
  const result = await db.query<ListedException>(
    `select * from (
       select e.id, e.class, e.objects, e.detail, e.first_seen_at, e.last_seen_at, e.cleared_at, e.resolved_at, e.resolution_note,
              case when e.resolved_at is not null then 'resolved' when e.cleared_at is not null then 'cleared' else 'open' end as status,
              coalesce(
                (e.objects->>'tenant_id')::uuid,
                (select j.tenant_id from jobs j where j.id = (e.objects->>'job_id')::uuid),
                (select a.tenant_id from accounts a where a.id = coalesce(e.objects->>'wallet_id', e.objects->>'account_id')::uuid)
              ) as tenant_id
       from reconciliation_exceptions e
       where ($2::text is null or e.class = $2)
     ) x
     where ($3::text is null or status = $3)
       and ($4::uuid is null or tenant_id = $4)
       and ${where}
     order by ${order}
     limit $1`,
    values,
  );
  return result.rows;
}
