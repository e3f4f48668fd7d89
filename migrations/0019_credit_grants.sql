-- Credit grants (docs/CONTRACT.md "Credit grants"): a wallet's money is a set of grants,
-- each a sub-account of the wallet with its own remaining and held amounts. The wallet's
-- accounts row keeps its projection and running balances as before (Σ remaining − debt,
-- Σ held); every ledger entry that moves a grant names it (grant_id); an entry of the
-- wallet that names no grant moves its debt. The arithmetic is src/funds/posting/ (pure):
-- writers lock the wallet, ask it, and write what it says (src/funds/wallet-funds.ts).

-- Unexpired credit that lapses leaves the wallet to the tenant's breakage account.
alter table accounts drop constraint accounts_kind_known;
alter table accounts add constraint accounts_kind_known check (kind in ('wallet', 'funding', 'revenue', 'breakage'));
-- What the wallet owes for work delivered that no grant covered; paid first by any money
-- that enters. Changes only under the wallet row's lock, with the entries that move it.
alter table accounts add column debt bigint not null default 0 constraint accounts_debt_nonnegative check (debt >= 0);

create table grants (
  id uuid constraint grants_pkey primary key,
  tenant_id uuid not null constraint grants_tenant_fkey references tenants (id),
  wallet_id uuid not null constraint grants_wallet_fkey references accounts (id),
  currency text not null,
  category text not null constraint grants_category_known check (category in ('paid', 'promotional')),
  priority integer not null constraint grants_priority_range check (priority between 0 and 100),
  -- what the grant brings (for a grant awaiting payment: what it will bring)
  amount bigint not null constraint grants_amount_nonnegative check (amount >= 0),
  -- what it still holds for the wallet, held part included; and the part open holds reserve
  remaining bigint not null default 0 constraint grants_remaining_nonnegative check (remaining >= 0),
  held bigint not null default 0 constraint grants_held_within check (held >= 0 and held <= remaining),
  -- the remaining it started with that no entry names (a wallet's balance from before grants, 0019)
  opening bigint not null default 0,
  source text not null constraint grants_source_known
    check (source in ('credit', 'grant', 'stripe_checkout', 'stripe_payment', 'auto_recharge')),
  -- the key of the movement that created it (a credit's key, a grant's Idempotency-Key): once per key
  grant_key text not null constraint grants_grant_key_key unique,
  effective_at timestamptz not null,
  expires_at timestamptz,
  -- set once the grant's money entered the wallet (at creation, when effective, or its payment)
  activated_at timestamptz,
  expiry_posted_at timestamptz,
  expired_amount bigint not null default 0,
  voided_at timestamptz,
  void_note text,
  voided_amount bigint not null default 0,
  canceled_at timestamptz,
  disputed boolean not null default false,
  payment jsonb,
  reference text,
  metadata jsonb not null default '{}',
  created_at timestamptz not null default clock_timestamp(),
  constraint grants_expiry_after_effective check (expires_at is null or expires_at > effective_at)
);
-- A wallet's grants in the draw-down order (src/funds/posting/order.ts drawDownOrder):
-- the lock-and-load of a posting reads those still holding money.
create index grants_wallet_order_idx on grants (wallet_id, priority, expires_at nulls last, category desc, effective_at, created_at, id)
  where remaining > 0 or held > 0;
create index grants_wallet_created_idx on grants (wallet_id, created_at desc, id desc);
-- The expiry sweep: grants past expires_at whose expiry has not posted.
create index grants_expiry_due_idx on grants (expires_at) where expires_at is not null and expiry_posted_at is null;

-- A job's hold, split across grants when the job is created: one share per grant, in
-- allocation order (position). held stays as allocated; once resolved captured + returned = held.
create table hold_shares (
  job_id uuid not null constraint hold_shares_hold_fkey references holds (job_id),
  grant_id uuid not null constraint hold_shares_grant_fkey references grants (id),
  tenant_id uuid not null,
  position integer not null,
  held bigint not null constraint hold_shares_held_nonnegative check (held >= 0),
  captured bigint not null default 0 constraint hold_shares_captured_nonnegative check (captured >= 0),
  returned bigint not null default 0 constraint hold_shares_returned_nonnegative check (returned >= 0),
  refunded bigint not null default 0 constraint hold_shares_refunded_within check (refunded >= 0 and refunded <= captured),
  -- the share's 'reserve' entry, which its capture and return post or void
  pending_entry_id uuid constraint hold_shares_pending_fkey references ledger_entries (id),
  constraint hold_shares_pkey primary key (job_id, grant_id),
  constraint hold_shares_job_position_key unique (job_id, position),
  constraint hold_shares_within_held check (captured + returned <= held)
);
create index hold_shares_grant_idx on hold_shares (grant_id);

-- What each positive adjustment of a job took, per grant (grant_id null: the part no grant
-- covered, which became debt), in the order taken; a refund undoes them latest first.
create table adjustment_draws (
  job_id uuid not null constraint adjustment_draws_job_fkey references jobs (id),
  version integer not null,
  position integer not null,
  grant_id uuid constraint adjustment_draws_grant_fkey references grants (id),
  tenant_id uuid not null,
  amount bigint not null constraint adjustment_draws_amount_positive check (amount > 0),
  refunded bigint not null default 0 constraint adjustment_draws_refunded_within check (refunded >= 0 and refunded <= amount),
  constraint adjustment_draws_pkey primary key (job_id, version, position)
);

-- Entries name their grant. A settlement funded by two grants is two entries of one type,
-- so the key of an entry is its settlement, type and grant (no grant: the wallet's debt,
-- or an account outside a wallet). A debt repayment moves money between two parties of
-- one wallet (a grant pays the debt): the only entry whose two sides are the same account.
alter table ledger_entries add column grant_id uuid constraint ledger_entries_grant_fkey references grants (id);
alter table ledger_entries drop constraint ledger_entries_type_known;
alter table ledger_entries add constraint ledger_entries_type_known check (entry_type in (
  'credit', 'reserve', 'capture', 'release_remainder', 'release', 'adjustment',
  'grant', 'grant_expiry', 'grant_void', 'debt_repayment', 'refund', 'refund_reversal', 'dispute_loss'));
alter table ledger_entries drop constraint ledger_entries_settlement_key_entry_type_key;
alter table ledger_entries add constraint ledger_entries_settlement_key_entry_type_grant_key
  unique nulls not distinct (settlement_key, entry_type, grant_id);
alter table ledger_entries drop constraint ledger_entries_distinct_accounts;
alter table ledger_entries add constraint ledger_entries_distinct_accounts
  check ((debit_account_id <> credit_account_id) = (entry_type <> 'debt_repayment'));
create index ledger_entries_grant_idx on ledger_entries (grant_id) where grant_id is not null;

-- The placing trigger of 0009/0013 learns the entry's key with its grant, and that a debt
-- repayment moves neither the wallet's balance nor its reserved amount.
create or replace function ledger_entries_join_wallet_order() returns trigger language plpgsql as $$
declare
  wallet uuid;
  balance_delta bigint := 0;
  reserved_delta bigint := 0;
  head record;
begin
  if new.wallet_seq is not null then
    return new;
  end if;
  select a.id into wallet from accounts a
  where a.kind = 'wallet' and a.id in (new.credit_account_id, new.debit_account_id)
  order by a.id = new.credit_account_id desc limit 1;
  if wallet is null then
    return new;
  end if;
  perform 1 from accounts where id = wallet for no key update;
  if exists (select 1 from ledger_entries e where e.settlement_key = new.settlement_key and e.entry_type = new.entry_type
             and e.grant_id is not distinct from new.grant_id) then
    return new;
  end if;
  if new.debit_account_id <> new.credit_account_id then
    if new.flags in ('posted', 'post_pending') then
      balance_delta := case when wallet = new.credit_account_id then new.amount else -new.amount end;
    end if;
    if wallet = new.debit_account_id then
      reserved_delta := case new.flags when 'pending' then new.amount
                                       when 'posted' then 0
                                       else -new.amount end;
    end if;
  end if;
  update accounts set entry_seq = entry_seq + 1,
                      running_balance = running_balance + balance_delta,
                      running_reserved = running_reserved + reserved_delta,
                      last_entry_at = greatest(clock_timestamp(), last_entry_at)
  where id = wallet
  returning entry_seq, running_balance, running_reserved, last_entry_at into head;
  new.wallet_id := wallet;
  new.wallet_seq := head.entry_seq;
  new.balance_after := head.running_balance;
  new.reserved_after := head.running_reserved;
  new.created_at := head.last_entry_at;
  return new;
end $$;

-- Every wallet's money so far becomes one paid grant (priority 50, no expiry, effective
-- since the wallet opened), its `opening` the remaining no entry names. Balances, entries
-- and their running values are untouched: the past reads as it did. A wallet whose
-- balance is below what it holds for jobs (an overdraft with holds open) keeps its holds
-- on the grant and owes the difference as debt.
create temporary table opening_grants on commit drop as
select a.id as wallet_id, a.tenant_id, a.currency, a.created_at,
       (md5('tally-opening-grant:' || a.id::text))::uuid as grant_id,
       greatest(a.credits_posted - a.debits_posted, a.debits_pending) as remaining,
       a.debits_pending as held,
       greatest(a.credits_posted - a.debits_posted, a.debits_pending) - (a.credits_posted - a.debits_posted) as debt
from accounts a where a.kind = 'wallet';

insert into grants (id, tenant_id, wallet_id, currency, category, priority, amount, remaining, held, opening,
                    source, grant_key, effective_at, activated_at, reference, created_at)
select grant_id, tenant_id, wallet_id, currency, 'paid', 50, remaining, remaining, held, remaining,
       'credit', 'opening:' || wallet_id::text, created_at, created_at, 'the wallet''s balance before credit grants', created_at
from opening_grants;

update accounts a set debt = o.debt from opening_grants o where a.id = o.wallet_id and o.debt > 0;

-- Each job's hold becomes one share on its wallet's grant: an open hold's share is still
-- held; a resolved one records what its capture took and returned, and what the job's
-- adjustments did since (net charges as one draw at the job's latest correction, net
-- refunds as refunded), so a later correction refunds what the job really paid.
insert into hold_shares (job_id, grant_id, tenant_id, position, held, captured, returned, refunded, pending_entry_id)
select h.job_id, o.grant_id, h.tenant_id, 0, h.amount, coalesce(h.posted, 0), coalesce(h.voided, 0),
       least(coalesce(h.posted, 0), greatest(-coalesce(adj.net, 0), 0)), h.pending_entry_id
from holds h join opening_grants o on o.wallet_id = h.wallet_id
left join (select job_id, sum(amount) as net from settlements where charge_type = 'adjustment' group by job_id) adj on adj.job_id = h.job_id;

insert into adjustment_draws (job_id, version, position, grant_id, tenant_id, amount)
select s.job_id, max(s.version), 0, o.grant_id, s.tenant_id, sum(s.amount)
from settlements s join jobs j on j.id = s.job_id join opening_grants o on o.wallet_id = j.wallet_id
where s.charge_type = 'adjustment'
group by s.job_id, o.grant_id, s.tenant_id
having sum(s.amount) > 0;
