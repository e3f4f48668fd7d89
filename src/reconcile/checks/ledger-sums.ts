import { projectionFromEntries } from '../../ledger/projection.js';
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

export const walletOverdrawn: Check = {
  class: 'wallet_overdrawn',
  covers: 'accounts',
  sql: `select a.id::text as key, jsonb_build_object('wallet_id', a.id, 'tenant_id', a.tenant_id) as objects,
               jsonb_build_object('balance', ${amount('a.credits_posted - a.debits_posted')}, 'currency', a.currency) as detail
        from accounts a where a.kind = 'wallet' and a.credits_posted - a.debits_posted < 0`,
};
