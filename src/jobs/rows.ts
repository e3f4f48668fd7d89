import type { Queryable } from '../db/pool.js';
import type { JobRow } from '../ledger/index.js';

export type { JobRow } from '../ledger/index.js';

export async function findJob(db: Queryable, jobId: string, tenantId?: string): Promise<JobRow | null> {
  const result = await db.query<JobRow>('select * from jobs where id = $1 and ($2::uuid is null or tenant_id = $2)', [
    jobId,
    tenantId ?? null,
  ]);
  return result.rows[0] ?? null;
}
