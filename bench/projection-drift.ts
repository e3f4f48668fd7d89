/**
 * The accounts whose projections (debits/credits, pending/posted) differ from the sums of
 * their ledger entries, written from the contract's ledger, not from src/: the bench's
 * verification and the failover drill's. Selects `id`.
 */
export const PROJECTION_DRIFT_SQL = `with moves as (
     select debit_account_id as account,
            case when flags = 'pending' then amount when flags in ('post_pending', 'void_pending') then -amount else 0 end as debits_pending,
            case when flags in ('posted', 'post_pending') then amount else 0 end as debits_posted,
            0::bigint as credits_pending, 0::bigint as credits_posted
     from ledger_entries
     union all
     select credit_account_id, 0, 0,
            case when flags = 'pending' then amount when flags in ('post_pending', 'void_pending') then -amount else 0 end,
            case when flags in ('posted', 'post_pending') then amount else 0 end
     from ledger_entries),
   sums as (
     select account, sum(debits_pending) as dp, sum(debits_posted) as dpo, sum(credits_pending) as cp, sum(credits_posted) as cpo
     from moves group by account)
   select a.id from accounts a left join sums s on s.account = a.id
   where (a.debits_pending, a.debits_posted, a.credits_pending, a.credits_posted)
         is distinct from (coalesce(s.dp, 0), coalesce(s.dpo, 0), coalesce(s.cp, 0), coalesce(s.cpo, 0))`;
