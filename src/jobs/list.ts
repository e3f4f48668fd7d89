import type { Queryable } from '../db/pool.js';
import { keyset, type PageRequest } from '../db/keyset.js';
import type { JobState } from '../lifecycle/index.js';
import type { JobRow } from './rows.js';

/** What GET /v1/jobs may be narrowed by; null means "any". */
export interface JobListFilter {
  tenantId: string | null;
  state: JobState | null;
  model: string | null;
  provider: string | null;
  walletId: string | null;
  createdGte: string | null;
  createdLt: string | null;
}

export type ListedJob = JobRow & { price_version: number };

/**
 * One page of jobs, newest first (UUIDv7 ids: id order is creation order), with the
 * pinned price version's number; `limit + 1` rows, for pageOf. Over jobs_tenant_id_idx
 * (a tenant's) or the primary key (the admin's), the filters checked on the way.
 */
export async function listJobs(db: Queryable, filter: JobListFilter, page: PageRequest): Promise<ListedJob[]> {
  const values: unknown[] = [
    page.limit + 1,
    filter.tenantId,
    filter.state,
    filter.model,
    filter.provider,
    filter.walletId,
    filter.createdGte,
    filter.createdLt,
  ];
  const { where, order } = keyset('j.id', page, values.length + 1);
  if (page.cursor) values.push(page.cursor.id);
  const result = await db.query<ListedJob>(
    `select j.*, p.version as price_version
     from jobs j join price_versions p on p.id = j.price_version_id
     where ($2::uuid is null or j.tenant_id = $2)
       and ($3::text is null or j.state = $3)
       and ($4::text is null or j.model = $4)
       and ($5::text is null or j.provider = $5)
       and ($6::uuid is null or j.wallet_id = $6)
       and ($7::timestamptz is null or j.created_at >= $7)
       and ($8::timestamptz is null or j.created_at < $8)
       and ${where}
     order by ${order}
     limit $1`,
    values,
  );
  return result.rows;
}
