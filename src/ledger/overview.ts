import type { Queryable } from '../db/pool.js';
import { formatAmount } from '../money/index.js';
import { TERMINAL_STATES } from '../lifecycle/index.js';
import { stateIn, unsettledSql } from '../queue/index.js';

const TERMINAL_SQL = `j.state in (${TERMINAL_STATES.map((s) => `'${s}'`).join(', ')})`;

export interface OverviewBucket {
  at: Date;
  /** jobs captured in the bucket */
  captures: number;
  /** jobs released in the bucket */
  releases: number;
  /** money captured (capture settlements plus adjustments), per currency */
  captured: Record<string, string>;
}

/**
 * Settlements per time bucket over the last `hours`, for the console's charts: every
 * bucket of the range is present (zero when nothing settled), so a chart has no gaps.
 */
export async function settlementSeries(
  db: Queryable,
  options: { hours: number; bucket: 'hour' | 'day'; tenantId: string | null },
): Promise<OverviewBucket[]> {
  const { rows } = await db.query<{ at: Date; captures: number; releases: number; currency: string | null; captured: string | null }>(
    `with buckets as (
       select generate_series(date_trunc($2, now() - make_interval(hours => $1)), date_trunc($2, now()), ('1 ' || $2)::interval) as at
     ), settled as (
       select date_trunc($2, s.created_at) as at, s.charge_type, s.amount, j.currency
       from settlements s join jobs j on j.id = s.job_id
       where s.created_at >= date_trunc($2, now() - make_interval(hours => $1)) and ($3::uuid is null or s.tenant_id = $3)
     )
     select b.at,
            (count(*) filter (where s.charge_type = 'capture'))::int as captures,
            (count(*) filter (where s.charge_type = 'release'))::int as releases,
            s.currency,
            (sum(s.amount) filter (where s.charge_type in ('capture', 'adjustment')))::text as captured
     from buckets b left join settled s on s.at = b.at
     group by b.at, s.currency
     order by b.at`,
    [options.hours, options.bucket, options.tenantId],
  );
  const byBucket = new Map<number, OverviewBucket>();
  for (const row of rows) {
    const key = row.at.getTime();
    const bucket = byBucket.get(key) ?? { at: row.at, captures: 0, releases: 0, captured: {} };
    bucket.captures += row.captures;
    bucket.releases += row.releases;
    if (row.currency && row.captured !== null) bucket.captured[row.currency] = formatAmount(BigInt(row.captured));
    byBucket.set(key, bucket);
  }
  return [...byBucket.values()];
}

export interface OverviewCounts {
  queue_depth: number;
  dead_letters: number;
  oldest_pending_seconds: number | null;
  open_exceptions: number | null;
  alerts_last_24h: number;
  jobs_open: number;
}

/** What needs attention now. Exceptions are the operator's: null for a tenant. */
export async function attentionCounts(db: Queryable, tenantId: string | null): Promise<OverviewCounts> {
  const { rows } = await db.query<OverviewCounts>(
    `select
       (select count(*) from webhook_events e where ${unsettledSql('e')} and ($1::uuid is null or e.tenant_id = $1))::int as queue_depth,
       (select count(*) from webhook_events e where ${stateIn('e', ['dead'])} and ($1::uuid is null or e.tenant_id = $1))::int as dead_letters,
       (select extract(epoch from now() - min(e.received_at))::float8 from webhook_events e
         where ${unsettledSql('e')} and ($1::uuid is null or e.tenant_id = $1)) as oldest_pending_seconds,
       case when $1::uuid is null then (select count(*) from reconciliation_exceptions where cleared_at is null and resolved_at is null)::int end as open_exceptions,
       (select count(*) from alerts a where a.created_at > now() - interval '24 hours' and ($1::uuid is null or a.tenant_id = $1))::int as alerts_last_24h,
       (select count(*) from jobs j where not ${TERMINAL_SQL} and ($1::uuid is null or j.tenant_id = $1))::int as jobs_open`,
    [tenantId],
  );
  return rows[0]!;
}
