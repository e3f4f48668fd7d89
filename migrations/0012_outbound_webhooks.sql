-- Outbound webhooks (docs/outbound-webhooks.md): Tally tells tenants what happened, signed
-- per Standard Webhooks, from a transactional outbox.
--
-- outbound_messages is the outbox: a message is inserted in the same transaction as the
-- effect it reports (src/outbound/enqueue.ts), together with one delivery per endpoint
-- subscribed to its type, so a message exists exactly when its effect committed. Workers
-- (src/outbound/worker.ts) deliver outside any transaction and log every attempt.

create table webhook_endpoints (
  id uuid constraint webhook_endpoints_pkey primary key,
  tenant_id uuid not null constraint webhook_endpoints_tenant_fkey references tenants (id),
  url text not null constraint webhook_endpoints_url_length check (length(url) between 1 and 2048),
  -- the event types it receives; '{*}' is every type
  events text[] not null constraint webhook_endpoints_events_present check (cardinality(events) >= 1),
  description text constraint webhook_endpoints_description_length check (length(description) <= 500),
  -- whsec_ + base64: kept in clear like providers' secrets, since workers sign with it
  secret text not null,
  -- after a rotation the old secret signs too, until it expires (both signatures are sent)
  previous_secret text,
  previous_secret_expires_at timestamptz,
  disabled_at timestamptz,
  disabled_reason text,
  -- the first failed attempt since the last success; null while the endpoint answers
  failing_since timestamptz,
  created_at timestamptz not null default now()
);
-- Listing a tenant's endpoints (newest first), and enqueue's look-up of the enabled ones.
create index webhook_endpoints_tenant_id_idx on webhook_endpoints (tenant_id, id);

create table outbound_messages (
  -- msg_<uuidv7>: the webhook-id header, the same on every attempt and every replay
  id text constraint outbound_messages_pkey primary key
    constraint outbound_messages_id_format check (id ~ '^msg_[0-9a-f-]{36}$'),
  tenant_id uuid not null,
  type text not null,
  -- {type, timestamp, data}: the body every delivery sends
  payload jsonb not null,
  created_at timestamptz not null default now()
);
-- Replays of a time range walk one tenant's messages by creation.
create index outbound_messages_tenant_created_idx on outbound_messages (tenant_id, created_at);

create sequence outbound_claim_tokens;

create table outbound_deliveries (
  id bigint generated always as identity constraint outbound_deliveries_pkey primary key,
  message_id text not null constraint outbound_deliveries_message_fkey references outbound_messages (id),
  endpoint_id uuid not null constraint outbound_deliveries_endpoint_fkey references webhook_endpoints (id),
  -- pending: never tried; delivering: claimed by a worker (lease, claim token);
  -- failed: the last attempt failed and another is due at next_attempt_at;
  -- delivered: a 2xx answered; dead: the retry schedule ran out
  state text not null default 'pending'
    constraint outbound_deliveries_state_valid check (state in ('pending', 'delivering', 'delivered', 'failed', 'dead')),
  attempts integer not null default 0,
  -- when a worker may take it: the next attempt's time; while delivering, the lease's end
  -- (a killed worker's claim is taken over then); 'infinity' while its endpoint is disabled
  next_attempt_at timestamptz not null default now(),
  lease_expires_at timestamptz,
  -- a fresh number at every claim: the outcome is written only under the token it was claimed with
  claim_token bigint,
  delivered_at timestamptz,
  created_at timestamptz not null default now()
);
-- The claim walks this index in time order and stops at its limit: due deliveries and
-- lapsed leases alike (both are "next_attempt_at has come"), none of a disabled endpoint.
create index outbound_deliveries_due_idx on outbound_deliveries (next_attempt_at) where state in ('pending', 'failed', 'delivering');
create index outbound_deliveries_message_idx on outbound_deliveries (message_id);
create index outbound_deliveries_endpoint_idx on outbound_deliveries (endpoint_id, id);

create table outbound_attempts (
  id uuid constraint outbound_attempts_pkey primary key,
  delivery_id bigint not null constraint outbound_attempts_delivery_fkey references outbound_deliveries (id),
  -- denormalised for the endpoint's attempt log (newest first)
  endpoint_id uuid not null,
  started_at timestamptz not null,
  -- null when no HTTP answer came (refused destination, connection error, timeout)
  status integer,
  latency_ms integer not null,
  -- the first 1 KiB of the answer's body
  response_excerpt text,
  error text
);
create index outbound_attempts_endpoint_idx on outbound_attempts (endpoint_id, id);
create index outbound_attempts_delivery_idx on outbound_attempts (delivery_id);
