import { amount, type Check } from './check.js';

/**
 * THE AUDITOR'S definition of what an entry `e` does to its wallet `e.wallet_id`: written
 * here again in SQL, on purpose, apart from the posting module's (funds/posting
 * entry-effects.ts walletDelta), as TigerBeetle's state_machine/auditor.zig keeps its own
 * model of the state machine: reconciliation checks what the kernel wrote against a
 * second reading of the entries, and a bug in one is not a bug in both.
 * test/unit/auditor-agrees.test.ts runs these expressions in PostgreSQL for every entry
 * type × flags × side and compares them with the kernel's.
 */
export const AUDITOR_BALANCE_CHANGE = `case when e.debit_account_id = e.credit_account_id then 0 -- a grant paying the wallet's debt
                          when e.flags in ('posted', 'post_pending')
                          then case when e.credit_account_id = e.wallet_id then e.amount else -e.amount end
                          else 0 end`;
export const AUDITOR_RESERVED_CHANGE = `case when e.debit_account_id = e.credit_account_id then 0
                          when e.debit_account_id <> e.wallet_id then 0
                          when e.flags = 'pending' then e.amount
                          when e.flags in ('post_pending', 'void_pending') then -e.amount
                          else 0 end`;

/**
 * What each entry says a wallet held after it (migrations/0009) recomputed from the
 * entries: along the wallet's order, numbers 1, 2, 3 … without a gap, instants never
 * going down, balance and reserved equal to the sums of the entries so far; the head on
 * the wallet's row equal to its last entry; and no entry of the wallet outside its
 * order. Balances at an instant and statements are read from these values, so they are
 * checked like the projection is. One exception per wallet, naming the first entry that
 * disagrees.
 */
export const runningBalanceDrift: Check = {
  class: 'running_balance_drift',
  covers: 'ledger_entries',
  sql: `with chain as (
          select e.wallet_id, e.wallet_seq, e.created_at, e.balance_after, e.reserved_after,
                 row_number() over w as position,
                 sum(${AUDITOR_BALANCE_CHANGE}) over w as balance_sum,
                 sum(${AUDITOR_RESERVED_CHANGE}) over w as reserved_sum,
                 lag(e.created_at) over w as previous_at
          from ledger_entries e where e.wallet_id is not null
          window w as (partition by e.wallet_id order by e.wallet_seq rows between unbounded preceding and current row)
        ), per_wallet as (
          select wallet_id,
                 min(wallet_seq) filter (where broken) as first_broken,
                 count(*) filter (where broken) as broken
          from (select *, (wallet_seq <> position or balance_after <> balance_sum or reserved_after <> reserved_sum
                           or created_at < previous_at) as broken from chain) c
          group by wallet_id
        ), unchained as (
          select w.id as wallet_id, count(*) as n
          from ledger_entries e join accounts w on w.kind = 'wallet' and w.id in (e.debit_account_id, e.credit_account_id)
          where e.wallet_id is null group by w.id
        )
        select a.id::text as key, jsonb_build_object('wallet_id', a.id, 'tenant_id', a.tenant_id) as objects,
               jsonb_build_object(
                 'first_broken_sequence', p.first_broken, 'broken_entries', coalesce(p.broken, 0), 'unchained_entries', coalesce(u.n, 0),
                 'head', jsonb_build_object('sequence', a.entry_seq, 'balance', ${amount('a.running_balance')},
                                            'reserved', ${amount('a.running_reserved')}, 'at', a.last_entry_at),
                 'last_entry', case when l.wallet_id is null then null else jsonb_build_object('sequence', l.wallet_seq,
                                 'balance', ${amount('l.balance_after')}, 'reserved', ${amount('l.reserved_after')}, 'at', l.created_at) end) as detail
        from accounts a
        left join per_wallet p on p.wallet_id = a.id
        -- the wallet's last entry: one probe of (wallet_id, wallet_seq) per wallet, not a sort of the ledger
        left join lateral (select e.wallet_id, e.wallet_seq, e.balance_after, e.reserved_after, e.created_at from ledger_entries e
                           where e.wallet_id = a.id order by e.wallet_seq desc limit 1) l on true
        left join unchained u on u.wallet_id = a.id
        where a.kind = 'wallet'
          and (coalesce(p.broken, 0) > 0 or coalesce(u.n, 0) > 0
               or (a.entry_seq, a.running_balance, a.running_reserved) is distinct from
                  (coalesce(l.wallet_seq, 0), coalesce(l.balance_after, 0), coalesce(l.reserved_after, 0))
               or a.last_entry_at is distinct from l.created_at)`,
};
