import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Queryable } from '../db/pool.js';
import { newId } from '../ids.js';
import { MESSAGE_DATA_SCHEMAS, PING_EVENT_TYPE, type MessageData, type MessageType, type OutboundEventType } from './events.js';

/**
 * The outbox's write side. A message is written in the caller's transaction — the one
 * that commits the effect it reports — with one delivery per enabled endpoint of the
 * tenant subscribed to its type, in one statement: a message (and its deliveries) exists
 * exactly when that transaction commits. No external call and no lock beyond the foreign
 * key checks on the endpoints (shared locks), so a settlement transaction can afford it,
 * once per effect or once per batch.
 */

/** One message to write: whose, what happened, and the details (`data`, typed per event type). */
export type NewMessage = { [T in OutboundEventType]: { tenantId: string; type: T; data: MessageData<T> } }[OutboundEventType];

/** A message's id: its `webhook-id`, stable across attempts and replays, so receivers can drop duplicates. */
export function newMessageId(): string {
  return `msg_${newId()}`;
}

/** One tenant's messages ($2: the tenant), so the statement names one tenant. */
const ENQUEUE = `
  with message as (
    insert into outbound_messages (id, tenant_id, type, payload, created_at)
    select m.id, $2, m.type,
           jsonb_build_object('type', m.type, 'timestamp', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', m.data),
           now()
    from unnest($1::text[], $3::text[], $4::jsonb[]) as m(id, type, data)
    -- Only for a tenant with an endpoint subscribed to the type (enabled or not, so a
    -- disabled one can be replayed once enabled): settlements of tenants who listen to
    -- nothing write no outbox rows.
    where exists (select 1 from webhook_endpoints e
                  where e.tenant_id = $2 and (e.events @> array[m.type] or e.events @> array['*']::text[]))
    returning id, type
  )
  insert into outbound_deliveries (message_id, endpoint_id, tenant_id)
  select message.id, e.id, $2
  from message
  join webhook_endpoints e
    on e.tenant_id = $2
   and e.disabled_at is null
   and (e.events @> array[message.type] or e.events @> array['*']::text[])`;

/** Writes one message in `tx`; returns its id. */
export async function enqueueMessage(tx: Queryable, message: NewMessage): Promise<string> {
  const [id] = await enqueueMessages(tx, [message]);
  return id!;
}

/**
 * Writes several messages in `tx`, one statement per tenant (a settlement batch is one
 * tenant's: one statement); returns their ids in order. A message for a tenant with no
 * endpoint subscribed to its type is not written (nobody could receive or replay it);
 * its id is returned all the same.
 */
export async function enqueueMessages(tx: Queryable, messages: readonly NewMessage[]): Promise<string[]> {
  if (messages.length === 0) return [];
  for (const message of messages) checkDataInTests(message.type, message.data);
  const written = messages.map((message) => ({ message, id: newMessageId() }));
  const byTenant = new Map<string, typeof written>();
  for (const w of written) byTenant.set(w.message.tenantId, [...(byTenant.get(w.message.tenantId) ?? []), w]);
  for (const [tenantId, own] of byTenant) {
    await tx.query({
      name: 'enqueue_outbound_messages',
      text: ENQUEUE,
      values: [own.map((w) => w.id), tenantId, own.map((w) => w.message.type), own.map((w) => JSON.stringify(w.message.data))],
    });
  }
  return written.map((w) => w.id);
}

/** A ping: a message to one endpoint only, whatever it subscribes to. Returns the message id. */
export async function enqueuePing(tx: Queryable, tenantId: string, endpointId: string): Promise<string> {
  const id = newMessageId();
  await tx.query(
    `with message as (
       insert into outbound_messages (id, tenant_id, type, payload, created_at)
       values ($1, $2, $3, jsonb_build_object('type', $3::text, 'timestamp', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', $4::jsonb), now())
       returning id
     )
     insert into outbound_deliveries (message_id, endpoint_id, tenant_id) select id, $5, $2 from message`,
    [id, tenantId, PING_EVENT_TYPE, JSON.stringify({ endpoint_id: endpointId }), endpointId],
  );
  return id;
}

/** Whether each message's `data` is checked against its type's schema (off until a command turns it on). */
let checking = false;

/**
 * Every test runs with TALLY_CHECK_RESPONSES=1, which the command that starts turns into
 * this call (src/cli/main.ts; in-process tests: test/support/process-knobs.ts): a `data`
 * that breaks its type's documented schema then throws (closed objects), so the documented
 * shapes cannot drift from what the ledger sends. Elsewhere nothing is checked: the types
 * already say it. A knob of the outbox's writer, which the ledger calls deep in a
 * settlement: set once for the process rather than passed down every call.
 */
export function checkOutboundMessages(on: boolean): void {
  checking = on;
}

function checkDataInTests(type: MessageType, data: unknown): void {
  if (!checking) return;
  const schema = MESSAGE_DATA_SCHEMAS[type];
  const closed = closedCopy(schema) as TSchema;
  if (!Value.Check(closed, data)) {
    const first = [...Value.Errors(closed, data)][0];
    throw new Error(`outbound message ${type}: data breaks its schema at ${first?.path || '/'}: ${first?.message ?? 'invalid'}`);
  }
}

/** The schema with every object closed (no property it does not declare). */
function closedCopy(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closedCopy);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string | symbol, unknown> = {};
  for (const key of Reflect.ownKeys(schema)) copy[key] = closedCopy((schema as Record<string | symbol, unknown>)[key]);
  if (copy.type === 'object' && copy.additionalProperties === undefined) copy.additionalProperties = false;
  return copy;
}
