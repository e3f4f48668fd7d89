import { projectionFromEntries } from '../../funds/index.js';
import { amount, type Check } from './check.js';

export const projectionDrift: Check = {
  class: 'projection_drift',
  covers: 'ledger_entries',
  sql: `with sums as (${projectionFromEntries()})
        select a.id::text as key, jsonb_build_object('account_id', a.id, 'tenant_id', a.tenant_id, 'kind', a.kind) as objects,
               jsonb_build_object(
                 'projection', jsonb_build_array(${amount('a.debits_pending')}, ${amount('a.debits_posted')}, ${amount('a.credits_pending')}, ${amount('a.credits_posted')}),
                 'entries', jsonb_build_array(${amount('coalesce(s.debits_pending, 0)')}, ${amount('coalesce(s.debits_posted, 0)')},
                                              ${amount('coalesce(s.credits_pending, 0)')}, ${amount('coalesce(s.credits_posted, 0)')})) as detail
        from accounts a left join sums s on s.account_id = a.id
        where (a.debits_pending, a.debits_posted, a.credits_pending, a.credits_posted)
              is distinct from (coalesce(s.debits_pending, 0), coalesce(s.debits_posted, 0), coalesce(s.credits_pending, 0), coalesce(s.credits_posted, 0))`,
};

export const currencySumNonzero: Check = {
  class: 'currency_sum_nonzero',
  covers: 'accounts',
  sql: `select a.currency as key, jsonb_build_object('currency', a.currency) as objects,
               jsonb_build_object('posted_sum', ${amount('sum(a.credits_posted - a.debits_posted)')},
                                  'pending_sum', ${amount('sum(a.credits_pending - a.debits_pending)')}) as detail
        from accounts a group by a.currency
        having sum(a.credits_posted - a.debits_posted) <> 0 or sum(a.credits_pending - a.debits_pending) <> 0`,
};

/**
 * A wallet below zero, as it is now: its balance and its debt (what was charged or paid
 * back beyond its grants, owed until money comes in). The balance is the grants' remaining
 * − the debt, so the debt is at least minus the balance, and more while grants still hold
 * money that pays no debt (held for a job, or not drawn yet). With the alert of the latest
 * posting that took it below zero (a settlement or posting key; null if none names the
 * wallet), found by class first, the leading column of the alerts' unique key.
 */
export const walletOverdrawn: Check = {
  class: 'wallet_overdrawn',
  covers: 'accounts',
  sql: `select a.id::text as key, jsonb_build_object('wallet_id', a.id, 'tenant_id', a.tenant_id) as objects,
               jsonb_build_object('balance', ${amount('a.credits_posted - a.debits_posted')}, 'debt', ${amount('a.debt')},
                                  'currency', a.currency,
                                  'overdrawn_by', (select jsonb_build_object('source', l.source, 'job_id', l.job_id, 'raised_at', l.created_at)
                                                   from alerts l
                                                   where l.class = 'wallet_overdrawn' and l.tenant_id = a.tenant_id
                                                     and l.detail->>'wallet_id' = a.id::text
                                                   order by l.created_at desc, l.id desc limit 1)) as detail
        from accounts a where a.kind = 'wallet' and a.credits_posted - a.debits_posted < 0`,
};
