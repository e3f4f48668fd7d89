import type { Queryable } from '../db/pool.js';
import { keyset, type PageRequest } from '../db/keyset.js';
import type { ChargeType } from '../lifecycle/index.js';
import type { SettlementRow } from './settlements.js';

/** What GET /v1/settlements may be narrowed by; null means "any". */
export interface SettlementListFilter {
  tenantId: string | null;
  chargeType: ChargeType | null;
  jobId: string | null;
  createdGte: string | null;
  createdLt: string | null;
}

/**
 * One page of settlements, newest first (UUIDv7 ids), `limit + 1` rows for pageOf.
 * A read model: it shares nothing with the settle transaction's writes.
 */
export async function listSettlementPage(db: Queryable, filter: SettlementListFilter, page: PageRequest): Promise<SettlementRow[]> {
  const values: unknown[] = [page.limit + 1, filter.tenantId, filter.chargeType, filter.jobId, filter.createdGte, filter.createdLt];
  const { where, order } = keyset('id', page, values.length + 1);
  if (page.cursor) values.push(page.cursor.id);
  const result = await db.query<SettlementRow>(
    `select * from settlements
     where ($2::uuid is null or tenant_id = $2)
       and ($3::text is null or charge_type = $3)
       and ($4::uuid is null or job_id = $4)
       and ($5::timestamptz is null or created_at >= $5)
       and ($6::timestamptz is null or created_at < $6)
       and ${where}
     order by ${order}
     limit $1`,
    values,
  );
  return result.rows;
}
