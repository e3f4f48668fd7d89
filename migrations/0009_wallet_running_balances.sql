-- A wallet's balances in time. Each ledger entry that touches a wallet takes its place in
-- that wallet's order under the wallet row's lock, and carries what the wallet held
-- right after it: a per-wallet sequence number (1, 2, 3, ... in lock order, which is
-- commit order for one wallet), the balance and the reserved amount after it, and the
-- instant it was posted (created_at, taken from clock_timestamp() under the lock, never
-- earlier than the wallet's previous entry). "The balance at T" is then one index
-- lookup: the wallet's newest entry at or before T. now() would not do: it is the
-- transaction's start, and two transactions on one wallet can commit in the other order.
--
-- The order's head lives on the wallet's accounts row (entry_seq, running_balance,
-- running_reserved, last_entry_at), beside the projection but apart from it: the chain
-- is a function of the entries alone, so a drifted projection (and its rebuild) never
-- leaks into the running balances. Reconciliation (running_balance_drift) checks that
-- every entry's running values are the prefix sums of the wallet's entries and that the
-- head is the last entry.

alter table accounts
  add column entry_seq bigint not null default 0,
  add column running_balance bigint not null default 0,
  add column running_reserved bigint not null default 0,
  add column last_entry_at timestamptz;

alter table ledger_entries
  add column wallet_id uuid,
  add column wallet_seq bigint,
  add column balance_after bigint,
  add column reserved_after bigint;

-- Existing entries take their place in each wallet's order by (created_at, id): the best
-- order they recorded (the lock order was not). Their instant stays their created_at, so
-- instants never go down along the order. The only UPDATE this table ever gets: the
-- append-only trigger is off for this statement, inside this migration's transaction
-- (the ALTER holds the table, no other session writes meanwhile).
alter table ledger_entries disable trigger ledger_entries_append_only;
update ledger_entries e
set wallet_id = c.wallet_id, wallet_seq = c.seq, balance_after = c.balance_after, reserved_after = c.reserved_after
from (
  select id, wallet_id,
         row_number() over w as seq,
         (sum(balance_delta) over w)::bigint as balance_after,
         (sum(reserved_delta) over w)::bigint as reserved_after
  from (
    select e.id, e.created_at, coalesce(cw.id, dw.id) as wallet_id,
           case when e.flags in ('posted', 'post_pending')
                then case when cw.id is not null then e.amount else -e.amount end
                else 0 end as balance_delta,
           case when cw.id is not null then 0
                when e.flags = 'pending' then e.amount
                when e.flags in ('post_pending', 'void_pending') then -e.amount
                else 0 end as reserved_delta
    from ledger_entries e
    left join accounts cw on cw.id = e.credit_account_id and cw.kind = 'wallet'
    left join accounts dw on dw.id = e.debit_account_id and dw.kind = 'wallet'
    where cw.id is not null or dw.id is not null
  ) sides
  window w as (partition by wallet_id order by created_at, id rows between unbounded preceding and current row)
) c
where e.id = c.id;
alter table ledger_entries enable trigger ledger_entries_append_only;

update accounts a
set entry_seq = l.wallet_seq, running_balance = l.balance_after, running_reserved = l.reserved_after, last_entry_at = l.created_at
from (
  select distinct on (wallet_id) wallet_id, wallet_seq, balance_after, reserved_after, created_at
  from ledger_entries where wallet_id is not null
  order by wallet_id, wallet_seq desc
) l
where a.id = l.wallet_id;

alter table ledger_entries
  add constraint ledger_entries_wallet_chain_complete check (
    (wallet_id is null) = (wallet_seq is null)
    and (wallet_id is null) = (balance_after is null)
    and (wallet_id is null) = (reserved_after is null)),
  add constraint ledger_entries_wallet_side check (wallet_id is null or wallet_id in (debit_account_id, credit_account_id)),
  add constraint ledger_entries_wallet_seq_positive check (wallet_seq > 0);
-- One place per number in a wallet's order: two writers can never both take it.
alter table ledger_entries add constraint ledger_entries_wallet_seq_key unique (wallet_id, wallet_seq);
-- "The newest entry at or before T", time ranges, and lists (instants rise with the sequence).
create index ledger_entries_wallet_time_idx on ledger_entries (wallet_id, created_at, wallet_seq);

-- The write paths (src/ledger/wallet-entries.ts) bring the running values themselves,
-- folded into the statement that moves the wallet's projection. An entry inserted any
-- other way (by hand, by a test forging one, by an older release still running during
-- an upgrade) gets them here, under the same lock, so no entry of a wallet is ever
-- left out of its order. It prefers the credited side when both sides are wallets
-- (no Tally path writes such an entry).
create function ledger_entries_join_wallet_order() returns trigger language plpgsql as $$
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
  if new.flags in ('posted', 'post_pending') then
    balance_delta := case when wallet = new.credit_account_id then new.amount else -new.amount end;
  end if;
  if wallet = new.debit_account_id then
    reserved_delta := case new.flags when 'pending' then new.amount
                                     when 'posted' then 0
                                     else -new.amount end;
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
create trigger ledger_entries_join_wallet_order before insert on ledger_entries
  for each row execute function ledger_entries_join_wallet_order();
