import { amount, type Check } from './check.js';

/**
 * THE AUDITOR'S reading of what an entry `e` of a hold or a settlement does to the
 * tenant's spend, apart from the kernel's (funds/posting entry-effects.ts spendDelta) on
 * purpose (see running-balances.ts): `now` counts in the period its hold or settlement was
 * created in, `of hold` leaves the period of the hold it resolves.
 * test/unit/auditor-agrees.test.ts compares them with the kernel's in PostgreSQL.
 */
export const AUDITOR_SPEND_NOW = `case when e.entry_type in ('reserve', 'capture') then e.amount
               when e.entry_type = 'adjustment' then case when e.credit_account_id = e.wallet_id then -e.amount else e.amount end
               else 0 end`;
export const AUDITOR_SPEND_OF_HOLD = `case when e.entry_type in ('capture', 'release_remainder', 'release') then -e.amount else 0 end`;

/**
 * The spend counters of spend limits (migrations/0014) recomputed from the holds and
 * settlements with their entries: per tenant, currency and UTC period (day, month), the
 * captures and adjustments posted in it (by their settlement's created_at) plus the holds
 * created in it less what resolved them — its open holds. The counter is written by the
 * statement that posts those entries, in the transaction that creates the hold or the
 * settlement (the same now()), so any difference — either way, or a period one side
 * lacks — is drift. Entries of neither a hold nor a settlement (forged), and settlements
 * without entries, are other classes' findings and count on neither side. One exception
 * per period, found again as the same one while it lasts.
 */
export const spendPeriodDrift: Check = {
  class: 'spend_period_drift',
  covers: 'ledger_entries',
  sql: `with movements as (
          -- a reservation: its hold's reserve entries (one per grant it draws on, 0019), in the hold's period
          select e.tenant_id, e.currency, h.created_at as at, ${AUDITOR_SPEND_NOW} as amount
          from holds h join ledger_entries e on e.job_id = h.job_id and e.entry_type = 'reserve'
          union all
          -- A settlement's entries, read once (settlement keys and holds' job ids are unique,
          -- so each entry meets at most one of each): what resolved a hold (capture,
          -- remainder, release) leaves the hold's period; captures and adjustments count in
          -- the settlement's period (a refund is the wallet's credit).
          select e.tenant_id, e.currency, m.at, m.amount
          from settlements s join ledger_entries e on e.settlement_key = s.settlement_key
          left join holds h on h.job_id = s.job_id
          cross join lateral (values (h.created_at, ${AUDITOR_SPEND_OF_HOLD}), (s.created_at, ${AUDITOR_SPEND_NOW})) as m(at, amount)
          where e.entry_type in ('capture', 'release_remainder', 'release', 'adjustment') and m.at is not null and m.amount <> 0
        ), recomputed as (
          select m.tenant_id, m.currency, p.period, p.starts_on, sum(m.amount) as spent
          from movements m
          cross join lateral (values ('day', (m.at at time zone 'UTC')::date),
                                     ('month', date_trunc('month', m.at at time zone 'UTC')::date)) as p(period, starts_on)
          group by m.tenant_id, m.currency, p.period, p.starts_on
        )
        select c.tenant_id || ':' || c.currency || ':' || c.period || ':' || to_char(c.starts_on, 'YYYY-MM-DD') as key,
               jsonb_build_object('tenant_id', c.tenant_id, 'currency', c.currency, 'period', c.period,
                                  'starts_on', to_char(c.starts_on, 'YYYY-MM-DD')) as objects,
               jsonb_build_object('counted', ${amount('coalesce(k.spent, 0)')}, 'recomputed', ${amount('coalesce(r.spent, 0)')}) as detail
        from (select tenant_id, currency, period, starts_on from spend_periods
              union select tenant_id, currency, period, starts_on from recomputed) c
        left join spend_periods k using (tenant_id, currency, period, starts_on)
        left join recomputed r using (tenant_id, currency, period, starts_on)
        where coalesce(k.spent, 0) <> coalesce(r.spent, 0)`,
};
