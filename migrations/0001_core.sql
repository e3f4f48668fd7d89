-- Tally's core schema. Money is bigint micro-units (scale 6); ids are UUIDv7 made in
-- TypeScript (no uuidv7() in SQL: PostgreSQL 15 is supported). Every constraint is
-- named, because callers tell an idempotent duplicate from a bug by constraint name.

-- Immutable tables refuse UPDATE and DELETE with SQLSTATE TL001 (AppendOnlyViolation).
create function tally_refuse_change() returns trigger language plpgsql as $$
begin
  raise exception '% on % is not allowed: the table is append-only', tg_op, tg_table_name
    using errcode = 'TL001', table = tg_table_name;
end $$;

create table tenants (
  id uuid constraint tenants_pkey primary key,
  name text not null constraint tenants_name_length check (length(name) between 1 and 200),
  created_at timestamptz not null default now()
);

-- Only a SHA-256 of the key is stored; the key itself appears once, in the create answer.
create table api_keys (
  id uuid constraint api_keys_pkey primary key,
  tenant_id uuid not null constraint api_keys_tenant_fkey references tenants (id),
  key_hash bytea not null constraint api_keys_key_hash_key unique,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
create index api_keys_tenant_idx on api_keys (tenant_id);

create table providers (
  name text constraint providers_pkey primary key
    constraint providers_name_format check (name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  kind text not null constraint providers_kind_known check (kind in ('generic', 'replicate', 'openai', 'fal')),
  -- every active signing secret; rotation adds the new one and removes the old later
  secrets text[] not null default '{}',
  jwks jsonb,
  api_key text,          -- write-only: never returned by the API, never logged
  base_url text,
  policies jsonb not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- Price books are versioned and immutable: each PUT inserts a new version.
create table price_versions (
  id uuid constraint price_versions_pkey primary key,
  model text not null constraint price_versions_model_length check (length(model) between 1 and 200),
  currency text not null constraint price_versions_currency_format check (currency ~ '^[A-Z]{3}$'),
  version integer not null constraint price_versions_version_positive check (version > 0),
  unit_prices jsonb not null, -- {"input_tokens": "1.000000", ...} per 1,000,000 units
  created_at timestamptz not null default now(),
  constraint price_versions_model_currency_version_key unique (model, currency, version)
);
create trigger price_versions_append_only before update or delete on price_versions
  for each row execute function tally_refuse_change();

-- A wallet per tenant and currency, and per-tenant system accounts (funding, revenue)
-- per currency: no single global row that every capture in the system queues on.
-- The four columns are a projection of ledger_entries, updated in the same transaction.
create table accounts (
  id uuid constraint accounts_pkey primary key,
  tenant_id uuid not null constraint accounts_tenant_fkey references tenants (id),
  currency text not null constraint accounts_currency_format check (currency ~ '^[A-Z]{3}$'),
  kind text not null constraint accounts_kind_known check (kind in ('wallet', 'funding', 'revenue')),
  debits_pending bigint not null default 0,
  debits_posted bigint not null default 0,
  credits_pending bigint not null default 0,
  credits_posted bigint not null default 0,
  created_at timestamptz not null default now(),
  constraint accounts_tenant_currency_kind_key unique (tenant_id, currency, kind),
  constraint accounts_pending_nonnegative check (debits_pending >= 0 and credits_pending >= 0)
);

create table jobs (
  id uuid constraint jobs_pkey primary key,
  tenant_id uuid not null constraint jobs_tenant_fkey references tenants (id),
  wallet_id uuid not null constraint jobs_wallet_fkey references accounts (id),
  provider text not null constraint jobs_provider_fkey references providers (name),
  provider_job_ref text constraint jobs_provider_job_ref_length check (length(provider_job_ref) between 1 and 500),
  model text not null,
  currency text not null,
  price_version_id uuid not null constraint jobs_price_version_fkey references price_versions (id),
  limits jsonb not null,
  state text not null constraint jobs_state_known
    check (state in ('reserved', 'running', 'cancel_requested', 'usage_pending', 'captured', 'released')),
  reserved bigint not null constraint jobs_reserved_nonnegative check (reserved >= 0),
  captured bigint,
  released bigint,
  adjusted bigint not null default 0,
  highest_correction integer not null default 0,
  -- intake numbers each job's events under this row's lock: commit order per job
  event_seq bigint not null default 0,
  cancel_requested_at timestamptz,
  hold_expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint jobs_provider_job_ref_key unique (provider, provider_job_ref),
  constraint jobs_resolution_consistent check (
    (state in ('captured', 'released')) = (captured is not null and released is not null))
);
create index jobs_tenant_idx on jobs (tenant_id, created_at desc);
create index jobs_cancel_requested_idx on jobs (cancel_requested_at) where state = 'cancel_requested';
create index jobs_open_hold_expiry_idx on jobs (hold_expires_at) where state not in ('captured', 'released');

-- A reservation: a pending transfer wallet → revenue, resolved exactly once.
create table holds (
  job_id uuid constraint holds_pkey primary key constraint holds_job_fkey references jobs (id),
  tenant_id uuid not null,
  wallet_id uuid not null constraint holds_wallet_fkey references accounts (id),
  revenue_account_id uuid not null constraint holds_revenue_fkey references accounts (id),
  currency text not null,
  amount bigint not null constraint holds_amount_nonnegative check (amount >= 0),
  pending_entry_id uuid, -- the 'reserve' ledger entry (null for a zero hold)
  posted bigint,
  voided bigint,
  resolved_by text, -- the settlement key that resolved it
  resolved_at timestamptz,
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  constraint holds_resolution_complete check (
    (resolved_by is null and posted is null and voided is null and resolved_at is null)
    or (resolved_by is not null and resolved_at is not null and posted >= 0 and voided >= 0
        and posted + voided = amount))
);
create index holds_open_idx on holds (expires_at) where resolved_by is null;

-- The database refuses to resolve a hold twice (the backstop behind the job lock).
create function holds_resolve_once() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    raise exception 'holds are never deleted' using errcode = 'TL001', table = 'holds';
  end if;
  if old.resolved_by is not null then
    raise exception 'hold of job % is already resolved by %', old.job_id, old.resolved_by
      using errcode = '23514', constraint = 'holds_resolved_once', table = 'holds';
  end if;
  if new.amount <> old.amount or new.wallet_id <> old.wallet_id then
    raise exception 'a hold''s amount and wallet are immutable'
      using errcode = '23514', constraint = 'holds_immutable_terms', table = 'holds';
  end if;
  return new;
end $$;
create trigger holds_resolve_once before update or delete on holds
  for each row execute function holds_resolve_once();

-- One financial effect: tenant:job:charge_type:version. The unique key turns a
-- repeat of the same effect into "return the first result".
create table settlements (
  id uuid constraint settlements_pkey primary key,
  settlement_key text not null constraint settlements_settlement_key_key unique,
  tenant_id uuid not null,
  job_id uuid not null constraint settlements_job_fkey references jobs (id),
  charge_type text not null constraint settlements_charge_type_known check (charge_type in ('capture', 'release', 'adjustment')),
  version integer not null constraint settlements_version_positive check (version > 0),
  -- signed from the wallet's side: capture ≥ 0 (charged), release ≥ 0 (voided),
  -- adjustment > 0 charges, < 0 refunds
  amount bigint not null,
  remainder bigint not null default 0, -- capture only: the part of the hold voided with it
  snapshot jsonb,                      -- pricing snapshot (usage, price version, unit prices, rounding, amount)
  reason text,
  event_provider text,
  event_key text,
  created_at timestamptz not null default now(),
  constraint settlements_one_per_phase_version check (charge_type = 'adjustment' or version = 1)
);
create index settlements_job_idx on settlements (job_id, created_at);
create trigger settlements_append_only before update or delete on settlements
  for each row execute function tally_refuse_change();

-- Immutable double-entry transfers (TigerBeetle-style). `flags`:
--   posted        an ordinary posted transfer
--   pending       a reservation: moves debits_pending / credits_pending
--   post_pending  posts (part of) a pending transfer: pending → posted
--   void_pending  voids (part of) a pending transfer: pending → released
create table ledger_entries (
  id uuid constraint ledger_entries_pkey primary key,
  settlement_key text not null,
  entry_type text not null constraint ledger_entries_type_known
    check (entry_type in ('credit', 'reserve', 'capture', 'release_remainder', 'release', 'adjustment')),
  flags text not null constraint ledger_entries_flags_known check (flags in ('posted', 'pending', 'post_pending', 'void_pending')),
  pending_id uuid constraint ledger_entries_pending_fkey references ledger_entries (id),
  debit_account_id uuid not null constraint ledger_entries_debit_fkey references accounts (id),
  credit_account_id uuid not null constraint ledger_entries_credit_fkey references accounts (id),
  amount bigint not null constraint ledger_entries_amount_positive check (amount > 0),
  currency text not null,
  tenant_id uuid not null,
  job_id uuid,
  reference text,
  created_at timestamptz not null default now(),
  constraint ledger_entries_settlement_key_entry_type_key unique (settlement_key, entry_type),
  constraint ledger_entries_distinct_accounts check (debit_account_id <> credit_account_id),
  constraint ledger_entries_pending_link check ((flags in ('post_pending', 'void_pending')) = (pending_id is not null))
);
create index ledger_entries_debit_idx on ledger_entries (debit_account_id, id);
create index ledger_entries_credit_idx on ledger_entries (credit_account_id, id);
create index ledger_entries_job_idx on ledger_entries (job_id) where job_id is not null;
create trigger ledger_entries_append_only before update or delete on ledger_entries
  for each row execute function tally_refuse_change();
-- TRUNCATE is refused too: an append-only ledger has no bulk erase.
create trigger ledger_entries_no_truncate before truncate on ledger_entries
  for each statement execute function tally_refuse_change();

-- Every claim of an event takes the next token; writes check it (fencing).
create sequence fencing_tokens;

-- One row per notification (provider, event_key): it is also the outbox entry the
-- workers claim. A claim sets lease_until and a fresh fencing token; every later
-- write checks the token, so an expired owner cannot overwrite the new owner's work.
create table webhook_events (
  provider text not null constraint webhook_events_provider_fkey references providers (name),
  event_key text not null constraint webhook_events_event_key_length check (length(event_key) between 1 and 500),
  tenant_id uuid not null,
  job_id uuid not null constraint webhook_events_job_fkey references jobs (id),
  seq bigint not null, -- per job, in commit order
  type text not null,
  payload_hash bytea not null,
  payload bytea not null,  -- the raw body as received
  event jsonb not null,    -- the canonical event (type, usage, correction, ...)
  usage jsonb,             -- fetched usage for named adapters, stored before settling
  state text not null default 'pending' constraint webhook_events_state_known
    check (state in ('pending', 'processing', 'applied', 'no_effect', 'stale', 'dead')),
  reason text,
  attempts integer not null default 0,
  run_after timestamptz not null default now(),
  lease_until timestamptz,
  fencing_token bigint not null default 0,
  last_error text,
  settlement_key text,
  received_at timestamptz not null default now(),
  processed_at timestamptz,
  constraint webhook_events_pkey primary key (provider, event_key),
  constraint webhook_events_job_seq_key unique (job_id, seq)
);
create index webhook_events_ready_idx on webhook_events (run_after) where state in ('pending', 'processing');
create index webhook_events_dead_idx on webhook_events (received_at) where state = 'dead';

-- Every delivery, including duplicates (without the payload), conflicts and mismatches.
create table delivery_attempts (
  id uuid constraint delivery_attempts_pkey primary key,
  provider text not null,
  event_key text not null,
  job_id uuid,
  outcome text not null constraint delivery_attempts_outcome_known
    check (outcome in ('accepted', 'already_accepted', 'event_key_conflict', 'event_mismatch')),
  payload_hash bytea not null,
  detail jsonb,
  received_at timestamptz not null default now()
);
create index delivery_attempts_event_idx on delivery_attempts (provider, event_key);
create index delivery_attempts_outcome_idx on delivery_attempts (outcome) where outcome in ('event_key_conflict', 'event_mismatch');

-- Conditions a settlement raised (usage_exceeds_reservation, wallet_overdrawn, late
-- usage after release): reconciliation reports them.
create table alerts (
  id uuid constraint alerts_pkey primary key,
  tenant_id uuid not null,
  job_id uuid,
  class text not null,
  source text not null, -- the settlement key or event that raised it
  detail jsonb,
  created_at timestamptz not null default now(),
  constraint alerts_class_source_key unique (class, source)
);

-- Idempotency-Key: stored in the same transaction as the effect it answers for.
create table idempotency_keys (
  principal text not null,
  method text not null,
  path text not null,
  key text not null constraint idempotency_keys_key_length check (length(key) between 1 and 255),
  request_hash bytea not null,
  response_status integer not null,
  response_body jsonb not null,
  created_at timestamptz not null default now(),
  constraint idempotency_keys_pkey primary key (principal, method, path, key)
);
create index idempotency_keys_created_idx on idempotency_keys (created_at);

-- The provider's own usage records, compared with what we accepted.
create table provider_usage (
  provider text not null,
  provider_job_ref text not null,
  import_id text not null,
  usage jsonb not null,
  imported_at timestamptz not null default now(),
  constraint provider_usage_pkey primary key (provider, provider_job_ref, import_id)
);

create table reconciliation_runs (
  id uuid constraint reconciliation_runs_pkey primary key,
  repair boolean not null,
  clean boolean,
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  summary jsonb
);

-- The same inconsistency found again is the same exception (same fingerprint).
create table reconciliation_exceptions (
  id uuid constraint reconciliation_exceptions_pkey primary key,
  class text not null,
  fingerprint text not null constraint reconciliation_exceptions_fingerprint_key unique,
  objects jsonb not null,
  detail jsonb,
  first_run_id uuid not null,
  last_run_id uuid not null,
  first_seen_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  cleared_at timestamptz,
  resolved_at timestamptz,
  resolution_note text
);

-- Periodic duties (cancel grace, hold expiry, scheduled reconciliation): the row
-- lock makes one worker of many run each duty per interval.
create table duties (
  name text constraint duties_pkey primary key,
  last_run_at timestamptz not null default 'epoch'
);
insert into duties (name) values ('cancel_grace'), ('reconcile'), ('idempotency_cleanup');
