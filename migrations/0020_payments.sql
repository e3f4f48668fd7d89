-- Payments through Stripe (CONTRACT.md "Payments (Stripe)", docs/payments.md): Stripe's
-- signed events come in like providers' webhooks (durably received, then settled by a
-- worker under a lock, each effect keyed by Stripe's object id), and Tally's own calls to
-- Stripe go out after commit from an outbox row, with an Idempotency-Key derived from the
-- row. Both are queues of the one queue engine (src/queue/engine/). Writers:
-- src/funds/payments/ (src/db/table-owners.ts).

-- The operator's Stripe account. The API key is write-only: sealed with AES-256-GCM under
-- a key derived from the server's secret (TALLY_SECRET_KEY, never in the database); its
-- mode (sk_live_ / sk_test_) decides which events are accepted (an event of the other
-- mode is refused and stored as refused).
create table payment_settings (
  processor text constraint payment_settings_pkey primary key constraint payment_settings_processor_known check (processor in ('stripe')),
  api_key_sealed text not null,
  -- the key's last 4 characters, to tell which key is configured
  api_key_last4 text not null,
  livemode boolean not null,
  -- whsec_…: every one verifies (rotation keeps the old one until removed)
  webhook_secrets text[] not null constraint payment_settings_secrets_present check (cardinality(webhook_secrets) >= 1),
  -- null: Stripe's API
  base_url text,
  updated_at timestamptz not null default now()
);

-- Stripe's events as received: the raw bytes (a duplicate and a conflict are told apart
-- by their hash), and the queue's columns. pending → processing (claimed: lease, fencing
-- token) → applied | no_effect (with reason); refused (livemode mismatch, never
-- processed); dead (an error no retry fixed). An event that needs an object Tally has not
-- seen yet goes back to pending with waiting_since (payment_event_stuck after 5 minutes).
create table stripe_events (
  id text constraint stripe_events_pkey primary key constraint stripe_events_id_length check (length(id) between 1 and 255),
  type text not null,
  livemode boolean not null,
  -- data.object.id: what the event is about
  object_id text,
  payload bytea not null,
  payload_hash bytea not null,
  -- Stripe's `created` (the Events API's order; `tally payments sync` starts after the newest)
  stripe_created timestamptz not null,
  -- webhook: delivered to the endpoint; sync: found by `tally payments sync`
  source text not null default 'webhook' constraint stripe_events_source_known check (source in ('webhook', 'sync')),
  state text not null default 'pending'
    constraint stripe_events_state_known check (state in ('pending', 'processing', 'applied', 'no_effect', 'refused', 'dead')),
  reason text,
  waiting_since timestamptz,
  attempts integer not null default 0,
  run_after timestamptz not null default now(),
  lease_until timestamptz,
  fencing_token bigint,
  last_error text,
  -- deliveries of this id with other bytes (409, never processed)
  conflicts integer not null default 0,
  received_at timestamptz not null default now(),
  settled_at timestamptz
);
-- The claim's walk: due events in run_after order.
create index stripe_events_due_idx on stripe_events (run_after) where state in ('pending', 'processing');
create index stripe_events_created_idx on stripe_events (stripe_created);

-- One Stripe customer per tenant and mode, created once (Idempotency-Key with the tenant's
-- id); the payment method of the tenant's latest successful checkout charges its recharges.
create table stripe_customers (
  tenant_id uuid not null constraint stripe_customers_tenant_fkey references tenants (id),
  livemode boolean not null,
  customer_id text not null constraint stripe_customers_customer_key unique,
  payment_method text,
  -- Stripe's `created` of the payment that left it (a later checkout's method wins)
  payment_method_at timestamptz,
  created_at timestamptz not null default now(),
  constraint stripe_customers_pkey primary key (tenant_id, livemode)
);

-- A Checkout top-up: its grant (awaiting payment) and the request that made it, then the
-- session Stripe made for it (created with an Idempotency-Key containing the grant's id).
create table stripe_checkouts (
  grant_id uuid constraint stripe_checkouts_pkey primary key constraint stripe_checkouts_grant_fkey references grants (id),
  -- the principal, the wallet and the Idempotency-Key, hashed: one checkout per key
  request_key text not null constraint stripe_checkouts_request_key unique,
  request_hash bytea not null,
  tenant_id uuid not null,
  wallet_id uuid not null,
  livemode boolean not null,
  amount_minor bigint not null constraint stripe_checkouts_amount_positive check (amount_minor > 0),
  currency text not null,
  success_url text not null,
  cancel_url text not null,
  session_id text constraint stripe_checkouts_session_key unique,
  session_url text,
  created_at timestamptz not null default now()
);

-- One row per payment intent that succeeded: the key of "one payment, one grant".
create table stripe_payments (
  payment_intent text constraint stripe_payments_pkey primary key,
  -- activated: its grant's money entered; mismatch: the paid amount or currency is not the
  -- grant's (it stays unpaid; reconciliation's payment_mismatch); no_grant: its metadata
  -- names neither a grant nor a wallet (recorded without effect)
  outcome text not null constraint stripe_payments_outcome_known check (outcome in ('activated', 'mismatch', 'no_grant')),
  grant_id uuid constraint stripe_payments_grant_fkey references grants (id),
  tenant_id uuid,
  wallet_id uuid,
  charge_id text,
  amount_minor bigint not null,
  currency text not null,
  detail text,
  created_at timestamptz not null default now()
);
create index stripe_payments_charge_idx on stripe_payments (charge_id) where charge_id is not null;
create index stripe_payments_grant_idx on stripe_payments (grant_id);

-- Each refund by its re_ id: posted once (pending or succeeded), credited back once (failed or canceled).
create table stripe_refunds (
  refund_id text constraint stripe_refunds_pkey primary key,
  payment_intent text not null,
  grant_id uuid not null constraint stripe_refunds_grant_fkey references grants (id),
  amount_minor bigint not null,
  status text not null,
  posted boolean not null default false,
  reversed boolean not null default false,
  updated_at timestamptz not null default now()
);

-- Each dispute by its dp_ id: open freezes its grant; closed lost posts once; other closes unfreeze.
create table stripe_disputes (
  dispute_id text constraint stripe_disputes_pkey primary key,
  payment_intent text not null,
  grant_id uuid not null constraint stripe_disputes_grant_fkey references grants (id),
  amount_minor bigint not null,
  status text not null,
  closed boolean not null default false,
  updated_at timestamptz not null default now()
);

-- A wallet's auto-recharge: decided under the wallet's lock by the posting that takes
-- available below threshold; what is in flight and what this month spent are read from
-- the recharges' grants (source auto_recharge).
create table auto_recharge (
  wallet_id uuid constraint auto_recharge_pkey primary key constraint auto_recharge_wallet_fkey references accounts (id),
  tenant_id uuid not null,
  enabled boolean not null,
  threshold bigint not null constraint auto_recharge_threshold_nonnegative check (threshold >= 0),
  target bigint not null,
  monthly_limit bigint constraint auto_recharge_limit_positive check (monthly_limit is null or monthly_limit > 0),
  consecutive_failures integer not null default 0,
  disabled_reason text,
  updated_at timestamptz not null default now(),
  constraint auto_recharge_target_above check (target > threshold)
);

-- The outbox of calls to Stripe: one row per recharge (a payment intent for its grant),
-- written in the transaction that decided it and called after commit by a worker with the
-- row's Idempotency-Key, so a crash at any instant charges at most once.
-- pending → calling (claimed) → done (Stripe answered definitively) | dead.
create table stripe_calls (
  id uuid constraint stripe_calls_pkey primary key,
  grant_id uuid not null constraint stripe_calls_grant_key unique constraint stripe_calls_grant_fkey references grants (id),
  tenant_id uuid not null,
  wallet_id uuid not null,
  idempotency_key text not null constraint stripe_calls_idempotency_key unique,
  -- what is sent, fixed at the decision: every retry sends the same parameters
  params jsonb not null,
  state text not null default 'pending' constraint stripe_calls_state_known check (state in ('pending', 'calling', 'done', 'dead')),
  -- succeeded, processing, declined (with the answer's code)
  outcome text,
  payment_intent text,
  attempts integer not null default 0,
  run_after timestamptz not null default now(),
  lease_until timestamptz,
  fencing_token bigint,
  last_error text,
  created_at timestamptz not null default now(),
  finished_at timestamptz
);
create index stripe_calls_due_idx on stripe_calls (run_after) where state in ('pending', 'calling');

-- A wallet's recharges in flight and this month's, read under the wallet lock.
create index grants_recharge_idx on grants (wallet_id, created_at) where source = 'auto_recharge';
