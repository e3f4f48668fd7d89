-- An entry inserted without its place in the wallet's order is placed by the trigger of
-- 0009 — before PostgreSQL checks the insert's conflicts. An INSERT … ON CONFLICT DO
-- NOTHING that does conflict (an older release replaying a credit during an upgrade)
-- would then have moved the wallet's head for a row never inserted. Now the trigger takes
-- the wallet's lock first and looks (each statement of the function sees what committed
-- before it): an entry under the same (settlement_key, entry_type) means this row will
-- not be inserted, and it is left unplaced (the insert does nothing, or fails on the
-- unique key). A writer of such an entry holds the wallet's lock until it commits, so
-- one still in flight is waited for, not missed.
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
  if exists (select 1 from ledger_entries e where e.settlement_key = new.settlement_key and e.entry_type = new.entry_type) then
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
