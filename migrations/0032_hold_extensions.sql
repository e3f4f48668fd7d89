-- Long-running jobs: holds that grow while the job runs (CONTRACT.md "Long-running jobs:
-- hold extensions"). An extension is a hold: its reserve entries, one per grant, are keyed
-- {tenant}:{job}:extension:{N}; the job's shares grow by them (hold_shares.held); the
-- job's hold (holds.amount) and reservation (jobs.reserved) are the first hold plus every
-- extension. The row below is the extension's record: its unique key is the boundary
-- that makes an extension happen once, and its allocation keeps the order a capture
-- consumes it in.

alter table jobs
  -- the tenant's rule for automatic extensions: {step: {dim: units}, max_limits: {dim: units}}
  add column auto_extend jsonb,
  -- the largest usage of each dimension the job's progress reports gave (they are cumulative)
  add column usage_so_far jsonb,
  -- N of the job's latest extension (0: none); the next one is N + 1, taken under the job's lock
  add column extension_count integer not null default 0 constraint jobs_extension_count_nonnegative check (extension_count >= 0),
  -- {reason, reserved, usage_price, at} of the latest check that found the hold short; null otherwise
  add column hold_exhausted jsonb,
  -- the `reserved` job.hold_exhausted was last sent for: once per value of reserved
  add column exhausted_announced bigint;

create table job_extensions (
  job_id uuid not null,
  tenant_id uuid not null,
  version integer not null constraint job_extensions_version_positive check (version >= 1),
  settlement_key text not null,
  amount bigint not null constraint job_extensions_amount_positive check (amount > 0),
  -- the job's limits after this extension
  limits jsonb not null,
  source text not null constraint job_extensions_source_known check (source in ('api', 'auto')),
  -- [{grant_id, amount}] in allocation order; grant_id null: held against the wallet's debt
  -- (a terminal event's extension, which its capture turns into debt)
  allocation jsonb not null,
  created_at timestamptz not null default now(),
  constraint job_extensions_pkey primary key (job_id, version, tenant_id),
  constraint job_extensions_settlement_key_key unique (settlement_key, tenant_id),
  constraint job_extensions_job_fkey foreign key (job_id, tenant_id) references jobs (id, tenant_id)
);

-- The part of a hold held against the wallet's debt (a terminal event's extension beyond
-- what the grants could hold): no share holds it, so the shares hold amount − owed.
alter table holds add column owed bigint not null default 0 constraint holds_owed_within check (owed >= 0 and owed <= amount);

-- A capture's part that an extension held against the debt is a draw of version 0 (the
-- capture's, before any correction), undone by a refund like an adjustment's draw.

-- A hold's amount grows by its extensions while it is open, and never shrinks; its wallet
-- never changes; a resolved hold never changes at all (0001's rule, otherwise kept).
create or replace function holds_resolve_once() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    raise exception 'holds are never deleted' using errcode = 'TL001', table = 'holds';
  end if;
  if old.resolved_by is not null then
    raise exception 'hold of job % is already resolved by %', old.job_id, old.resolved_by
      using errcode = '23514', constraint = 'holds_resolved_once', table = 'holds';
  end if;
  if new.amount < old.amount or new.owed < old.owed or new.wallet_id <> old.wallet_id then
    raise exception 'a hold''s amount only grows (by an extension) and its wallet is immutable'
      using errcode = '23514', constraint = 'holds_immutable_terms', table = 'holds';
  end if;
  return new;
end $$;
