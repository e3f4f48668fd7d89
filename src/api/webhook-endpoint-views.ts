import { Type, type TSchema } from '@sinclair/typebox';
import { ALL_EVENTS, OUTBOUND_EVENT_TYPES, PING_EVENT_TYPE } from '../outbound/events.js';
import type { AttemptRow } from '../outbound/attempts.js';
import type { EndpointRow } from '../outbound/endpoints.js';

/** Request and view schemas of the outbound webhook API (routes/webhook-endpoints.ts), and the views. */

const Instant = Type.String({ format: 'date-time', description: 'RFC 3339, UTC' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const EventTypes = Type.Array(Type.Union([...OUTBOUND_EVENT_TYPES, ALL_EVENTS].map((t) => Type.Literal(t))), {
  minItems: 1,
  maxItems: OUTBOUND_EVENT_TYPES.length + 1,
  uniqueItems: true,
  description: `the event types sent to this endpoint: any of ${OUTBOUND_EVENT_TYPES.join(', ')}; ["*"] for all, including types added later`,
});
export const EndpointUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'http or https, no credentials; public addresses only unless the operator allows more',
});
export const Description = Type.String({ maxLength: 500, description: 'yours, to tell endpoints apart' });
export const GraceSeconds = Type.Integer({
  minimum: 0,
  maximum: 7 * 86_400,
  description: 'how long the old secret keeps signing beside the new one (default 86400; 0: not at all)',
});

const endpointFields = {
  id: Type.String(),
  tenant_id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Nullable(Type.String()),
  disabled: Type.Boolean(),
  disabled_at: Nullable(Instant),
  disabled_reason: Nullable(Type.String({ description: 'who or what disabled it: a PATCH, or failing for too long' })),
  failing_since: Nullable(
    Type.String({ format: 'date-time', description: 'the first failed attempt since the last success; null while it answers' }),
  ),
  previous_secret_expires_at: Nullable(
    Type.String({ format: 'date-time', description: 'during a rotation: until when the previous secret also signs' }),
  ),
  created_at: Instant,
};

export const EndpointView = Type.Object(endpointFields, { description: 'a webhook endpoint, without its secret' });
export const EndpointCreated = Type.Object(
  {
    ...endpointFields,
    secret: Type.String({ description: 'whsec_…: verify deliveries with it; shown only in this answer and its idempotent replay' }),
  },
  { description: 'a new webhook endpoint with its signing secret' },
);
export const SecretRotated = Type.Object({
  id: Type.String(),
  secret: Type.String({ description: 'the new whsec_ secret: shown only in this answer and its idempotent replay' }),
  previous_secret_expires_at: Nullable(
    Type.String({ format: 'date-time', description: 'until when the old secret also signs; null with grace_seconds 0' }),
  ),
});
export const PingSent = Type.Object({ message_id: Type.String(), endpoint_id: Type.String(), type: Type.Literal(PING_EVENT_TYPE) });
export const MessageReplayed = Type.Object({
  message_id: Type.String(),
  deliveries: Type.Integer({ description: 'new deliveries queued (same message id: receivers drop what they already have)' }),
});
export const RangeReplayed = Type.Object({
  endpoint_id: Type.String(),
  replayed: Type.Integer({ description: 'messages queued again to this endpoint' }),
  next_since: Nullable(
    Type.String({ format: 'date-time', description: 'more messages are in the range: replay again from here; null when all were queued' }),
  ),
});
export const AttemptView = Type.Object(
  {
    id: Type.String(),
    delivery_id: Type.String(),
    message_id: Type.String({ description: 'the webhook-id sent' }),
    type: Type.String(),
    started_at: Instant,
    status: Nullable(Type.Integer({ description: "the answer's HTTP status; null when none came" })),
    latency_ms: Type.Integer(),
    response_excerpt: Nullable(Type.String({ description: "the first 1 KiB of the answer's body" })),
    error: Nullable(Type.String({ description: 'why the attempt failed: no answer, a refused destination, a redirect; null for a 2xx' })),
  },
  { description: 'one delivery attempt' },
);

export function endpointView(row: EndpointRow) {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    url: row.url,
    events: row.events,
    description: row.description,
    disabled: row.disabled_at !== null,
    disabled_at: row.disabled_at?.toISOString() ?? null,
    disabled_reason: row.disabled_reason,
    failing_since: row.failing_since?.toISOString() ?? null,
    previous_secret_expires_at: row.previous_secret_expires_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

export function attemptView(row: AttemptRow) {
  return {
    id: row.id,
    delivery_id: row.delivery_id.toString(),
    message_id: row.message_id,
    type: row.type,
    started_at: row.started_at.toISOString(),
    status: row.status,
    latency_ms: row.latency_ms,
    response_excerpt: row.response_excerpt,
    error: row.error,
  };
}
