-- Every table ready to be distributed by tenant with Citus (issue 28.3,
-- docs/operations/scaling.md, src/db/distribution.ts): a tenant's own rows all carry
-- tenant_id, and every primary key, unique key and foreign key between those tables
-- includes it, because Citus enforces a key only inside one shard. Nothing changes on one
-- server but the keys' columns: the rows are kept, and no index is added. Each key keeps
-- its name (code names them in ON CONFLICT and in error handling) and its columns, with
-- tenant_id last: the index is the one it replaces, so a lookup that names only the old
-- columns (intake finding a job by id, an admin's GET by id) is served as before.
-- test/integration/citus-schema.test.ts reads the result from the catalog.

-- 1. tenant_id on the tenant's rows that lacked it, from their parent row. A row whose
--    tenant cannot be found stops the migration, naming the table (nothing is guessed).

-- A provider delivery: its job's tenant (every delivery intake records names the job it
-- resolved), else its event's.
alter table delivery_attempts add column tenant_id uuid;
update delivery_attempts a set tenant_id = j.tenant_id from jobs j where j.id = a.job_id;
update delivery_attempts a set tenant_id = e.tenant_id
  from webhook_events e where a.tenant_id is null and e.provider = a.provider and e.event_key = a.event_key;

-- An answer's principal: 'tenant:<id>' is that tenant's; the admin's are kept under the
-- nil UUID, no tenant's id (src/db/distribution.ts, NO_TENANT).
alter table idempotency_keys add column tenant_id uuid;
update idempotency_keys set tenant_id = case when principal like 'tenant:%' then substr(principal, 8)::uuid
                                             else '00000000-0000-0000-0000-000000000000'::uuid end;

alter table outbound_deliveries add column tenant_id uuid;
update outbound_deliveries d set tenant_id = m.tenant_id from outbound_messages m where m.id = d.message_id;
alter table outbound_attempts add column tenant_id uuid;
update outbound_attempts a set tenant_id = d.tenant_id from outbound_deliveries d where d.id = a.delivery_id;

alter table stripe_refunds add column tenant_id uuid;
update stripe_refunds r set tenant_id = g.tenant_id from grants g where g.id = r.grant_id;
alter table stripe_disputes add column tenant_id uuid;
update stripe_disputes r set tenant_id = g.tenant_id from grants g where g.id = r.grant_id;
-- A payment no grant of ours claims (outcome no_grant) is no tenant's.
update stripe_payments p set tenant_id = g.tenant_id from grants g where p.tenant_id is null and g.id = p.grant_id;
update stripe_payments set tenant_id = '00000000-0000-0000-0000-000000000000'::uuid where tenant_id is null and grant_id is null;

do $$
declare
  t text;
  missing bigint;
begin
  foreach t in array array['delivery_attempts', 'idempotency_keys', 'outbound_deliveries', 'outbound_attempts',
                           'stripe_refunds', 'stripe_disputes', 'stripe_payments'] loop
    execute format('select count(*) from %I where tenant_id is null', t) into missing;
    if missing > 0 then
      raise exception '% row(s) of % have no tenant to be found from their parent row; fix them, then migrate again', missing, t;
    end if;
    execute format('alter table %I alter column tenant_id set not null', t);
  end loop;
end $$;

-- 2. The foreign keys between tenant tables go, to be made again on the new keys (4.).
alter table jobs drop constraint jobs_wallet_fkey;
alter table holds drop constraint holds_job_fkey, drop constraint holds_wallet_fkey, drop constraint holds_revenue_fkey;
alter table settlements drop constraint settlements_job_fkey;
alter table grants drop constraint grants_wallet_fkey;
alter table ledger_entries drop constraint ledger_entries_debit_fkey, drop constraint ledger_entries_credit_fkey,
  drop constraint ledger_entries_grant_fkey, drop constraint ledger_entries_pending_fkey;
alter table hold_shares drop constraint hold_shares_hold_fkey, drop constraint hold_shares_grant_fkey,
  drop constraint hold_shares_pending_fkey;
alter table adjustment_draws drop constraint adjustment_draws_job_fkey, drop constraint adjustment_draws_grant_fkey;
alter table webhook_events drop constraint webhook_events_job_provider_fkey;
alter table outbound_deliveries drop constraint outbound_deliveries_message_fkey, drop constraint outbound_deliveries_endpoint_fkey;
alter table outbound_attempts drop constraint outbound_attempts_delivery_fkey;
alter table wallet_thresholds drop constraint wallet_thresholds_wallet_fkey;
alter table auto_recharge drop constraint auto_recharge_wallet_fkey;
alter table stripe_checkouts drop constraint stripe_checkouts_grant_fkey;
alter table stripe_payments drop constraint stripe_payments_grant_fkey;
alter table stripe_refunds drop constraint stripe_refunds_grant_fkey;
alter table stripe_disputes drop constraint stripe_disputes_grant_fkey;
alter table stripe_calls drop constraint stripe_calls_grant_fkey;

-- 3. Each primary and unique key with tenant_id, under its own name.
alter table accounts drop constraint accounts_pkey, add constraint accounts_pkey primary key (id, tenant_id);
alter table jobs drop constraint jobs_pkey, add constraint jobs_pkey primary key (id, tenant_id),
  drop constraint jobs_id_provider_key, add constraint jobs_id_provider_key unique (id, provider, tenant_id),
  -- A provider's job ref is unique within a tenant here; across tenants, the writers
  -- refuse a ref another tenant's job of the provider has (ledger/job-writes.ts).
  drop constraint jobs_provider_job_ref_key, add constraint jobs_provider_job_ref_key unique (provider, provider_job_ref, tenant_id);
alter table holds drop constraint holds_pkey, add constraint holds_pkey primary key (job_id, tenant_id);
alter table settlements drop constraint settlements_pkey, add constraint settlements_pkey primary key (id, tenant_id),
  -- a settlement key starts with its tenant's id: the same keys are unique
  drop constraint settlements_settlement_key_key, add constraint settlements_settlement_key_key unique (settlement_key, tenant_id);
alter table grants drop constraint grants_pkey, add constraint grants_pkey primary key (id, tenant_id),
  drop constraint grants_grant_key_key, add constraint grants_grant_key_key unique (grant_key, tenant_id);
alter table ledger_entries drop constraint ledger_entries_pkey, add constraint ledger_entries_pkey primary key (id, tenant_id),
  drop constraint ledger_entries_settlement_key_entry_type_grant_key,
  add constraint ledger_entries_settlement_key_entry_type_grant_key unique nulls not distinct (settlement_key, entry_type, grant_id, tenant_id),
  drop constraint ledger_entries_wallet_seq_key, add constraint ledger_entries_wallet_seq_key unique (wallet_id, wallet_seq, tenant_id);
alter table hold_shares drop constraint hold_shares_pkey, add constraint hold_shares_pkey primary key (job_id, grant_id, tenant_id),
  drop constraint hold_shares_job_position_key, add constraint hold_shares_job_position_key unique (job_id, position, tenant_id);
alter table adjustment_draws drop constraint adjustment_draws_pkey,
  add constraint adjustment_draws_pkey primary key (job_id, version, position, tenant_id);
-- A provider's event id names one event of one job, so of one tenant.
alter table webhook_events drop constraint webhook_events_pkey, add constraint webhook_events_pkey primary key (provider, event_key, tenant_id),
  drop constraint webhook_events_job_seq_key, add constraint webhook_events_job_seq_key unique (job_id, seq, tenant_id);
alter table delivery_attempts drop constraint delivery_attempts_pkey, add constraint delivery_attempts_pkey primary key (id, tenant_id);
alter table alerts drop constraint alerts_pkey, add constraint alerts_pkey primary key (id, tenant_id),
  -- an alert's source is a settlement key or an event of the tenant
  drop constraint alerts_class_source_key, add constraint alerts_class_source_key unique (class, source, tenant_id);
alter table idempotency_keys drop constraint idempotency_keys_pkey,
  add constraint idempotency_keys_pkey primary key (principal, method, path, key, tenant_id);
alter table webhook_endpoints drop constraint webhook_endpoints_pkey, add constraint webhook_endpoints_pkey primary key (id, tenant_id);
alter table outbound_messages drop constraint outbound_messages_pkey, add constraint outbound_messages_pkey primary key (id, tenant_id);
alter table outbound_deliveries drop constraint outbound_deliveries_pkey, add constraint outbound_deliveries_pkey primary key (id, tenant_id);
alter table outbound_attempts drop constraint outbound_attempts_pkey, add constraint outbound_attempts_pkey primary key (id, tenant_id);
alter table wallet_thresholds drop constraint wallet_thresholds_pkey, add constraint wallet_thresholds_pkey primary key (id, tenant_id),
  drop constraint wallet_thresholds_wallet_amount_key, add constraint wallet_thresholds_wallet_amount_key unique (wallet_id, amount, tenant_id);
alter table spend_limits drop constraint spend_limits_pkey, add constraint spend_limits_pkey primary key (id, tenant_id);
alter table auto_recharge drop constraint auto_recharge_pkey, add constraint auto_recharge_pkey primary key (wallet_id, tenant_id);
-- Stripe's ids are unique at Stripe: within a tenant here, and found by id alone when
-- Stripe's event names no tenant (docs/operations/scaling.md).
alter table stripe_customers drop constraint stripe_customers_customer_key, add constraint stripe_customers_customer_key unique (customer_id, tenant_id);
alter table stripe_checkouts drop constraint stripe_checkouts_pkey, add constraint stripe_checkouts_pkey primary key (grant_id, tenant_id),
  drop constraint stripe_checkouts_request_key, add constraint stripe_checkouts_request_key unique (request_key, tenant_id),
  drop constraint stripe_checkouts_session_key, add constraint stripe_checkouts_session_key unique (session_id, tenant_id);
alter table stripe_payments drop constraint stripe_payments_pkey, add constraint stripe_payments_pkey primary key (payment_intent, tenant_id);
alter table stripe_refunds drop constraint stripe_refunds_pkey, add constraint stripe_refunds_pkey primary key (refund_id, tenant_id);
alter table stripe_disputes drop constraint stripe_disputes_pkey, add constraint stripe_disputes_pkey primary key (dispute_id, tenant_id);
alter table stripe_calls drop constraint stripe_calls_pkey, add constraint stripe_calls_pkey primary key (id, tenant_id),
  drop constraint stripe_calls_grant_key, add constraint stripe_calls_grant_key unique (grant_id, tenant_id),
  drop constraint stripe_calls_idempotency_key, add constraint stripe_calls_idempotency_key unique (idempotency_key, tenant_id);

-- 4. The foreign keys again, each pairing tenant_id with tenant_id: a row may only name
--    its own tenant's rows (so far only true by how the code wrote them). Same names.
alter table jobs add constraint jobs_wallet_fkey foreign key (wallet_id, tenant_id) references accounts (id, tenant_id);
alter table holds add constraint holds_job_fkey foreign key (job_id, tenant_id) references jobs (id, tenant_id),
  add constraint holds_wallet_fkey foreign key (wallet_id, tenant_id) references accounts (id, tenant_id),
  add constraint holds_revenue_fkey foreign key (revenue_account_id, tenant_id) references accounts (id, tenant_id);
alter table settlements add constraint settlements_job_fkey foreign key (job_id, tenant_id) references jobs (id, tenant_id);
alter table grants add constraint grants_wallet_fkey foreign key (wallet_id, tenant_id) references accounts (id, tenant_id);
alter table ledger_entries add constraint ledger_entries_debit_fkey foreign key (debit_account_id, tenant_id) references accounts (id, tenant_id),
  add constraint ledger_entries_credit_fkey foreign key (credit_account_id, tenant_id) references accounts (id, tenant_id),
  add constraint ledger_entries_grant_fkey foreign key (grant_id, tenant_id) references grants (id, tenant_id),
  add constraint ledger_entries_pending_fkey foreign key (pending_id, tenant_id) references ledger_entries (id, tenant_id);
alter table hold_shares add constraint hold_shares_hold_fkey foreign key (job_id, tenant_id) references holds (job_id, tenant_id),
  add constraint hold_shares_grant_fkey foreign key (grant_id, tenant_id) references grants (id, tenant_id),
  add constraint hold_shares_pending_fkey foreign key (pending_entry_id, tenant_id) references ledger_entries (id, tenant_id);
alter table adjustment_draws add constraint adjustment_draws_job_fkey foreign key (job_id, tenant_id) references jobs (id, tenant_id),
  add constraint adjustment_draws_grant_fkey foreign key (grant_id, tenant_id) references grants (id, tenant_id);
-- Still the job row intake locks anyway (migration 0015), not the provider's one row.
alter table webhook_events add constraint webhook_events_job_provider_fkey
  foreign key (job_id, provider, tenant_id) references jobs (id, provider, tenant_id);
alter table outbound_deliveries add constraint outbound_deliveries_message_fkey foreign key (message_id, tenant_id) references outbound_messages (id, tenant_id),
  add constraint outbound_deliveries_endpoint_fkey foreign key (endpoint_id, tenant_id) references webhook_endpoints (id, tenant_id);
alter table outbound_attempts add constraint outbound_attempts_delivery_fkey foreign key (delivery_id, tenant_id) references outbound_deliveries (id, tenant_id);
alter table wallet_thresholds add constraint wallet_thresholds_wallet_fkey foreign key (wallet_id, tenant_id) references accounts (id, tenant_id);
alter table auto_recharge add constraint auto_recharge_wallet_fkey foreign key (wallet_id, tenant_id) references accounts (id, tenant_id);
alter table stripe_checkouts add constraint stripe_checkouts_grant_fkey foreign key (grant_id, tenant_id) references grants (id, tenant_id);
alter table stripe_payments add constraint stripe_payments_grant_fkey foreign key (grant_id, tenant_id) references grants (id, tenant_id);
alter table stripe_refunds add constraint stripe_refunds_grant_fkey foreign key (grant_id, tenant_id) references grants (id, tenant_id);
alter table stripe_disputes add constraint stripe_disputes_grant_fkey foreign key (grant_id, tenant_id) references grants (id, tenant_id);
alter table stripe_calls add constraint stripe_calls_grant_fkey foreign key (grant_id, tenant_id) references grants (id, tenant_id);
