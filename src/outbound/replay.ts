import type { Queryable } from '../db/pool.js';
import { PING_EVENT_TYPE } from './events.js';

/**
 * Sending messages again: new deliveries of the same messages (the same ids, so a receiver
 * that already has one drops the repeat), each with its own fresh retry window. Only to
 * enabled endpoints: a disabled one is enabled first (PATCH), then replayed.
 */

/** Most messages one range replay takes; `next_since` says where to go on. */
export const REPLAY_MAX_MESSAGES = 10_000;

/**
 * A message again, to the endpoints it went to before (or to `endpointId`, one of its
 * tenant's). Null when the message is not the tenant's (or does not exist).
 */
export async function replayMessage(
  db: Queryable,
  messageId: string,
  tenantId: string | null,
  endpointId: string | null,
): Promise<{ deliveries: number } | null> {
  const result = await db.query<{ found: boolean; deliveries: number }>(
    `with message as (
       select id, tenant_id from outbound_messages where id = $1 and ($2::uuid is null or tenant_id = $2)
     ), targets as (
       select e.id from webhook_endpoints e, message
       where e.tenant_id = message.tenant_id and e.disabled_at is null
         and case when $3::uuid is null
                  then exists (select 1 from outbound_deliveries d where d.message_id = message.id and d.endpoint_id = e.id)
                  else e.id = $3 end
     ), added as (
       insert into outbound_deliveries (message_id, endpoint_id, tenant_id)
       select message.id, targets.id, message.tenant_id from message, targets
       returning 1
     )
     select exists (select 1 from message) as found, (select count(*) from added)::int as deliveries`,
    [messageId, tenantId, endpointId],
  );
  const row = result.rows[0]!;
  return row.found ? { deliveries: row.deliveries } : null;
}

/**
 * An endpoint's messages of a time range again, oldest first: those it subscribes to now
 * (its tenant's messages of those types, including any sent while it was disabled) and
 * any it had a delivery of (its pings). At most REPLAY_MAX_MESSAGES; `next_since` is the
 * creation time of the first one left over, to replay from there, or null.
 */
export async function replayRange(
  db: Queryable,
  endpointId: string,
  since: Date,
  until: Date,
): Promise<{ replayed: number; next_since: Date | null }> {
  const result = await db.query<{ replayed: number; next_since: Date | null }>(
    `with endpoint as (
       select id, tenant_id, events from webhook_endpoints where id = $1
     ), picked as (
       select m.id, m.created_at from outbound_messages m, endpoint e
       where m.tenant_id = e.tenant_id and m.created_at >= $2 and m.created_at < $3
         and ((m.type <> $5 and (e.events @> array[m.type] or e.events @> array['*']::text[]))
              or exists (select 1 from outbound_deliveries d where d.message_id = m.id and d.endpoint_id = e.id))
       order by m.created_at, m.id
       limit $4 + 1
     ), added as (
       insert into outbound_deliveries (message_id, endpoint_id, tenant_id)
       select p.id, $1, (select tenant_id from endpoint) from (select id from picked order by created_at, id limit $4) p
       returning 1
     )
     select (select count(*) from added)::int as replayed,
            (select created_at from picked order by created_at, id offset $4 limit 1) as next_since`,
    [endpointId, since, until, REPLAY_MAX_MESSAGES, PING_EVENT_TYPE],
  );
  return result.rows[0]!;
}
