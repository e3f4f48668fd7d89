import type { Queryable } from '../db/pool.js';
import { keyset, type PageRequest } from '../db/keyset.js';
import type { AlertClass } from './raise.js';

/** Every alert class, for filters and schemas; the check below fails to compile when AlertClass grows without it. */
export const ALERT_CLASSES = [
  'usage_exceeds_reservation',
  'late_success_after_release',
  'late_usage_after_release',
  'wallet_overdrawn',
  'hold_open_past_expiry',
  'webhook_endpoint_disabled',
] as const satisfies readonly AlertClass[];
const everyAlertClassListed: AlertClass extends (typeof ALERT_CLASSES)[number] ? true : never = true;
void everyAlertClassListed;

export interface AlertRow {
  id: string;
  tenant_id: string;
  job_id: string | null;
  class: AlertClass;
  source: string;
  detail: Record<string, unknown> | null;
  created_at: Date;
}

/** What GET /v1/alerts may be narrowed by; null means "any". */
export interface AlertListFilter {
  tenantId: string | null;
  alertClass: AlertClass | null;
  jobId: string | null;
}

/** One page of alerts, newest first (UUIDv7 ids), `limit + 1` rows for pageOf. */
export async function listAlerts(db: Queryable, filter: AlertListFilter, page: PageRequest): Promise<AlertRow[]> {
  const values: unknown[] = [page.limit + 1, filter.tenantId, filter.alertClass, filter.jobId];
  const { where, order } = keyset('id', page, values.length + 1);
  if (page.cursor) values.push(page.cursor.id);
  const result = await db.query<AlertRow>(
    `select id, tenant_id, job_id, class, source, detail, created_at from alerts
     where ($2::uuid is null or tenant_id = $2)
       and ($3::text is null or class = $3)
       and ($4::uuid is null or job_id = $4)
       and ${where}
     order by ${order}
     limit $1`,
    values,
  );
  return result.rows;
}
