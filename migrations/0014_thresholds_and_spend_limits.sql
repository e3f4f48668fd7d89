-- Balance thresholds and spend limits (docs/CONTRACT.md "Balance thresholds", "Spend
-- limits"). Both are evaluated in the statement that moves the wallet
-- (src/ledger/wallet-entries.ts), under the wallet row's lock: every writer of a wallet
-- holds that lock from the movement to its COMMIT, so what they read there is exact.

-- A wallet's thresholds on `available` (balance − reserved). `armed` is true exactly when
-- available is at or above the amount: a movement taking it below an armed threshold
-- disarms it and writes one wallet.balance_low message; one lifting it back re-arms it.
create table wallet_thresholds (
  id uuid constraint wallet_thresholds_pkey primary key,
  wallet_id uuid not null constraint wallet_thresholds_wallet_fkey references accounts (id),
  tenant_id uuid not null,
  amount bigint not null constraint wallet_thresholds_amount_nonnegative check (amount >= 0),
  armed boolean not null,
  created_at timestamptz not null default now(),
  -- one threshold per amount: two would announce the same crossing twice
  constraint wallet_thresholds_wallet_amount_key unique (wallet_id, amount)
);

-- How many thresholds the wallet has, kept on its row by the threshold API under the
-- row's lock: the movement statement reads it from the row it locks (the latest
-- version), so a wallet without thresholds costs that statement nothing more.
alter table accounts add column threshold_count integer not null default 0
  constraint accounts_threshold_count_nonnegative check (threshold_count >= 0);

-- Called by the movement statement once it holds the wallet's lock, with what
-- `available` is after each of its entries, in the wallet's order. VOLATILE: each query
-- here takes a fresh snapshot (READ COMMITTED), so it sees a threshold committed while
-- the statement waited for the lock — the statement's own snapshot would not. Walks each
-- threshold along the entries: armed and below → a crossing (disarmed); disarmed and at
-- or above → re-armed. Writes `armed` only when it changed; returns the crossings as
-- [{threshold_id, threshold, available, position}] (amounts as text: exact bigints).
create function wallet_thresholds_cross(wallet uuid, available_after bigint[]) returns jsonb
language plpgsql volatile as $$
declare
  threshold record;
  armed_now boolean;
  i integer;
  crossings jsonb := '[]'::jsonb;
begin
  for threshold in
    select t.id, t.amount, t.armed from wallet_thresholds t where t.wallet_id = wallet order by t.amount desc, t.id
  loop
    armed_now := threshold.armed;
    for i in 1 .. coalesce(array_length(available_after, 1), 0) loop
      if armed_now and available_after[i] < threshold.amount then
        crossings := crossings || jsonb_build_object('threshold_id', threshold.id, 'threshold', threshold.amount::text,
                                                     'available', available_after[i]::text, 'position', i);
        armed_now := false;
      elsif not armed_now and available_after[i] >= threshold.amount then
        armed_now := true;
      end if;
    end loop;
    if armed_now <> threshold.armed then
      update wallet_thresholds set armed = armed_now where id = threshold.id;
    end if;
  end loop;
  return crossings;
end $$;

-- A tenant's spend limit per currency and UTC period: a reservation that would take the
-- period's spend above it is refused (402 spend_limit_reached).
create table spend_limits (
  id uuid constraint spend_limits_pkey primary key,
  tenant_id uuid not null constraint spend_limits_tenant_fkey references tenants (id),
  currency text not null constraint spend_limits_currency_format check (currency ~ '^[A-Z]{3}$'),
  period text not null constraint spend_limits_period_known check (period in ('day', 'month')),
  amount bigint not null constraint spend_limits_amount_nonnegative check (amount >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint spend_limits_tenant_currency_period_key unique (tenant_id, currency, period)
);

-- A tenant's spend per currency and period, kept whether or not a limit exists (a limit
-- set mid-period counts what was spent before it): captures and adjustments posted in
-- the period plus the open holds of jobs reserved in it. The movement statement adds to
-- it, under the wallet's lock: a reservation (+ its amount, in its period), a capture
-- (+ the captured amount in the capture's period, − the hold in the hold's period), a
-- release (− the hold in the hold's period), an adjustment (± its amount). A period is
-- its transaction's now() in UTC — the created_at of the hold and of the settlement —
-- so reconciliation (spend_period_drift) recomputes it from the entries with the
-- instants of their holds and settlements.
create table spend_periods (
  tenant_id uuid not null,
  currency text not null,
  period text not null constraint spend_periods_period_known check (period in ('day', 'month')),
  starts_on date not null,
  spent bigint not null,
  constraint spend_periods_pkey primary key (tenant_id, currency, period, starts_on)
);

-- The spend so far, from holds and settlements with their entries (as spend_period_drift
-- recomputes it): no writer may commit meanwhile (it would be missed), so the tables it
-- is read from are held for this migration's transaction.
lock table ledger_entries, holds, settlements in share mode;
insert into spend_periods (tenant_id, currency, period, starts_on, spent)
select m.tenant_id, m.currency, p.period, p.starts_on, sum(m.amount)
from (
  -- a reservation: its hold's reserve entry, in the hold's period
  select e.tenant_id, e.currency, h.created_at as at, e.amount
  from holds h join ledger_entries e on e.id = h.pending_entry_id
  union all
  -- what resolved a hold (capture, remainder, release) leaves the hold's period
  select e.tenant_id, e.currency, h.created_at, -e.amount
  from settlements s join ledger_entries e on e.settlement_key = s.settlement_key join holds h on h.job_id = s.job_id
  where e.entry_type in ('capture', 'release_remainder', 'release')
  union all
  -- captures and adjustments count in the settlement's period (a refund is the wallet's credit)
  select e.tenant_id, e.currency, s.created_at, case when e.credit_account_id = e.wallet_id then -e.amount else e.amount end
  from settlements s join ledger_entries e on e.settlement_key = s.settlement_key
  where e.entry_type in ('capture', 'adjustment')
) m
cross join lateral (values ('day', (m.at at time zone 'UTC')::date),
                           ('month', date_trunc('month', m.at at time zone 'UTC')::date)) as p(period, starts_on)
group by m.tenant_id, m.currency, p.period, p.starts_on
having sum(m.amount) <> 0;
