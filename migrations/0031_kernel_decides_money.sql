-- Issue 34, item 2: what an entry does to a wallet is defined once, by the posting module
-- (src/funds/posting/entry-effects.ts walletDelta, spendDelta); SQL applies what it
-- computed and decides nothing about money.
--
-- 1. The placing trigger of 0009/0013/0019 worked out an entry's balance and reserved
--    change itself (a second definition) for an entry inserted without its place in the
--    wallet's order. Every write path brings the place and the running values
--    (src/funds/wallet-entries.ts, since 0009), so the trigger now only refuses an entry
--    of a wallet that comes without them: no entry of a wallet is left out of its order,
--    and nothing but the posting writer says what its running values are.
create or replace function ledger_entries_join_wallet_order() returns trigger language plpgsql as $$
begin
  -- Placed (every entry the posting writer inserts): a simple expression, no query.
  if new.wallet_seq is not null then
    return new;
  end if;
  if exists (select 1 from accounts a where a.kind = 'wallet' and a.id in (new.credit_account_id, new.debit_account_id)) then
    raise exception 'entry % (%) moves a wallet but has no place in its order: entries of a wallet are written by the posting writer with their running values',
      new.id, new.settlement_key
      using errcode = 'check_violation', constraint = 'ledger_entries_wallet_order_placed';
  end if;
  return new;
end $$;

-- 2. Balance thresholds are walked along a movement's entries in TypeScript
--    (src/funds/thresholds.ts crossThresholds), after the movement's statement, under the
--    wallet's lock it holds.
drop function wallet_thresholds_cross(uuid, bigint[]);
