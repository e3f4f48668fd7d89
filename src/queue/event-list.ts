import type { Queryable } from '../db/pool.js';
import { keyset, type PageRequest } from '../db/keyset.js';
import type { EventState } from './states.js';

/** What GET /v1/events may be narrowed by; null means "any". */
export interface EventListFilter {
  tenantId: string | null;
  state: EventState | null;
  provider: string | null;
  jobId: string | null;
}

export interface ListedEvent {
  provider: string;
  event_key: string;
  tenant_id: string;
  job_id: string;
  type: string;
  state: EventState;
  reason: string | null;
  attempts: number;
  /** operators only: the raw error text, which may name private URLs */
  last_error: string | null;
  /** the stable code of last_error, for tenants (as in the job view) */
  error_code: 'usage_fetch_failed' | 'settlement_failed' | null;
  settlement_key: string | null;
  received_at: Date;
  processed_at: Date | null;
  dead_lettered_at: Date | null;
  discarded_by: string | null;
  discarded_at: Date | null;
  discard_note: string | null;
}

/**
 * The list order: newest received first. received_at alone is not unique (one
 * transaction's events share it); with the job and its per-job sequence it is.
 */
const ORDER_KEY = ['received_at', 'job_id', 'seq'] as const;

/**
 * Where an event stands in the list order, or null when there is no such event (of
 * this tenant, when one is given). The instant is read as text with its microseconds:
 * a JavaScript Date keeps milliseconds only, and a cursor rounded down would skip or
 * repeat events.
 */
async function positionOf(db: Queryable, provider: string, eventKey: string, tenantId: string | null): Promise<unknown[] | null> {
  const result = await db.query<{ received_at: string; job_id: string; seq: bigint }>(
    `select to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as received_at, job_id, seq
     from webhook_events where provider = $1 and event_key = $2 and ($3::uuid is null or tenant_id = $3)`,
    [provider, eventKey, tenantId],
  );
  const row = result.rows[0];
  return row ? [row.received_at, row.job_id, row.seq.toString()] : null;
}

/**
 * One page of webhook events, newest first, `limit + 1` rows for pageOf; the cursor id is
 * `provider/event_key`. Null when the cursor names no event the caller may see. Reads
 * only: webhook_events is written by queue/ alone, and not here.
 */
export async function listEvents(db: Queryable, filter: EventListFilter, page: PageRequest): Promise<ListedEvent[] | null> {
  let position: unknown[] = [];
  if (page.cursor) {
    const slash = page.cursor.id.indexOf('/');
    const found = await positionOf(db, page.cursor.id.slice(0, slash), page.cursor.id.slice(slash + 1), filter.tenantId);
    if (!found) return null;
    position = found;
  }
  const values: unknown[] = [page.limit + 1, filter.tenantId, filter.state, filter.provider, filter.jobId];
  const { where, order } = keyset(ORDER_KEY, page, values.length + 1);
  values.push(...position);
  const result = await db.query<ListedEvent>(
    `select provider, event_key, tenant_id, job_id, type, state, reason, attempts, last_error, settlement_key,
            received_at, processed_at, dead_lettered_at, discarded_by, discarded_at, discard_note,
            case when last_error is null then null
                 when (event->>'fetch_usage')::boolean and usage_fetched_at is null then 'usage_fetch_failed'
                 else 'settlement_failed' end as error_code
     from webhook_events
     where ($2::uuid is null or tenant_id = $2)
       and ($3::text is null or state = $3)
       and ($4::text is null or provider = $4)
       and ($5::uuid is null or job_id = $5)
       and ${where}
     order by ${order}
     limit $1`,
    values,
  );
  return result.rows;
}
