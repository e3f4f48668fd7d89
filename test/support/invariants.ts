import { expect } from 'vitest';
import type { Queryable } from '../../src/db/pool.js';

/**
 * The ledger's invariants, each one SQL query that returns the rows violating it
 * (docs/ARCHITECTURE.md "Glossary", CONTRACT.md "Billing rules"). assertLedgerInvariants runs them
 * all over the whole database and fails with every violation found, so a test file
 * calls it in afterEach and any test that leaves the ledger inconsistent fails.
 */
const CHECKS: Record<string, string> = {
  // Each account's four projection columns equal the sums over its entries, with the
  // flag semantics of transfers.ts deltas(): posted → posted; pending → pending;
  // post_pending → pending −a, posted +a; void_pending → pending −a.
  projection_equals_entries: `
    with moves as (
      select debit_account_id as account,
             case flags when 'pending' then amount when 'posted' then 0 else -amount end as debits_pending,
             case when flags in ('posted', 'post_pending') then amount else 0 end as debits_posted,
             0::bigint as credits_pending, 0::bigint as credits_posted
      from ledger_entries
      union all
      select credit_account_id, 0, 0,
             case flags when 'pending' then amount when 'posted' then 0 else -amount end,
             case when flags in ('posted', 'post_pending') then amount else 0 end
      from ledger_entries
    ), sums as (
      select account, sum(debits_pending) as dp, sum(debits_posted) as dpo, sum(credits_pending) as cp, sum(credits_posted) as cpo
      from moves group by account
    )
    select a.id, a.kind, a.debits_pending, a.debits_posted, a.credits_pending, a.credits_posted,
           coalesce(s.dp, 0) as entries_dp, coalesce(s.dpo, 0) as entries_dpo, coalesce(s.cp, 0) as entries_cp, coalesce(s.cpo, 0) as entries_cpo
    from accounts a left join sums s on s.account = a.id
    where (a.debits_pending, a.debits_posted, a.credits_pending, a.credits_posted)
          is distinct from (coalesce(s.dp, 0), coalesce(s.dpo, 0), coalesce(s.cp, 0), coalesce(s.cpo, 0))`,

  // Double entry: per currency all balances sum to zero, pending debits = pending credits.
  currency_sums_zero: `
    select currency, sum(credits_posted - debits_posted) as posted_sum, sum(debits_pending) as dp, sum(credits_pending) as cp
    from accounts group by currency
    having sum(credits_posted - debits_posted) <> 0 or sum(debits_pending) <> sum(credits_pending)`,

  // An entry never crosses currencies or tenants.
  entry_accounts_match: `
    select e.id, e.settlement_key from ledger_entries e
    join accounts d on d.id = e.debit_account_id join accounts c on c.id = e.credit_account_id
    where d.currency <> e.currency or c.currency <> e.currency or d.tenant_id <> e.tenant_id or c.tenant_id <> e.tenant_id`,

  // A post/void never exceeds what its pending transfer reserved.
  pending_not_overdrawn: `
    select p.id, p.amount, sum(e.amount) as resolved from ledger_entries p
    join ledger_entries e on e.pending_id = p.id
    group by p.id, p.amount having sum(e.amount) > p.amount`,

  // A hold is resolved once: never both a capture and a release.
  hold_captured_and_released: `
    select job_id, array_agg(charge_type) as phases from settlements
    where charge_type in ('capture', 'release') group by job_id having count(*) > 1`,

  // The hold row agrees with the settlement that resolved it, and with the entries
  // that posted or voided its pending transfer (all of it once resolved, none before).
  hold_matches_resolution: `
    select h.job_id, h.amount, h.posted, h.voided, h.resolved_by, s.settlement_key, s.charge_type, s.amount as s_amount, s.remainder,
           coalesce(r.resolved, 0) as entries_resolved
    from holds h
    left join settlements s on s.job_id = h.job_id and s.charge_type in ('capture', 'release')
    left join (select job_id, sum(amount) as resolved from ledger_entries where pending_id is not null group by job_id) r
      on r.job_id = h.job_id
    where (h.resolved_by is null) <> (s.settlement_key is null)
       or h.resolved_by is distinct from s.settlement_key
       or (h.resolved_by is not null and h.posted + h.voided <> h.amount)
       or (s.charge_type = 'capture' and (h.posted <> s.amount or h.voided <> s.remainder))
       or (s.charge_type = 'release' and (h.posted <> 0 or h.voided <> s.amount))
       or coalesce(r.resolved, 0) <> case when h.resolved_by is null then 0 else h.amount end
       or (h.pending_entry_id is null) <> (h.amount = 0)`,

  // Every job has its hold, for its reservation, on its wallet.
  job_has_hold: `
    select j.id from jobs j left join holds h on h.job_id = j.id
    where h.job_id is null or h.amount <> j.reserved or h.wallet_id <> j.wallet_id or h.tenant_id <> j.tenant_id`,

  // A terminal job's hold is resolved: captured + released = reserved, matching its
  // settlements; a non-terminal job has neither; jobs.adjusted is the sum of its
  // adjustments; the state says which phase resolved it.
  job_matches_settlements: `
    select j.id, j.state, j.reserved, j.captured, j.released, j.adjusted, s.charge_type, s.amount, s.remainder, coalesce(a.total, 0) as adjustments
    from jobs j
    left join settlements s on s.job_id = j.id and s.charge_type in ('capture', 'release')
    left join (select job_id, sum(amount) as total from settlements where charge_type = 'adjustment' group by job_id) a on a.job_id = j.id
    where j.adjusted <> coalesce(a.total, 0)
       or (j.state in ('captured', 'released') and j.captured + j.released <> j.reserved)
       or (j.state = 'captured' and (s.charge_type is distinct from 'capture' or j.captured <> s.amount or j.released <> s.remainder))
       or (j.state = 'released' and (s.charge_type is distinct from 'release' or j.captured <> 0 or j.released <> s.amount))
       or (j.state not in ('captured', 'released') and (s.charge_type is not null or j.captured is not null or j.released is not null or coalesce(a.total, 0) <> 0))
       or (a.total is not null and j.state <> 'captured')`,

  // What a captured job was charged in total (capture + adjustments) is the billable
  // amount of the newest applied usage: the snapshot of its highest-versioned charge.
  net_charge_is_latest_billable: `
    select j.id, j.captured, j.adjusted, latest.settlement_key, latest.snapshot->>'billable' as billable
    from jobs j
    cross join lateral (
      select settlement_key, snapshot from settlements s where s.job_id = j.id and s.charge_type in ('capture', 'adjustment')
      order by case s.charge_type when 'capture' then 0 else s.version end desc limit 1
    ) latest
    where j.state = 'captured'
      and (j.captured + j.adjusted) <> round((latest.snapshot->>'billable')::numeric * 1000000)::bigint`,

  // Never charged more than the hold, never refunded below zero.
  net_charge_within_reservation: `
    select id, reserved, captured, adjusted from jobs
    where state = 'captured' and (captured + adjusted < 0 or captured + adjusted > reserved)`,

  highest_correction_covers_adjustments: `
    select j.id, j.highest_correction, max(s.version) as max_adjustment from jobs j join settlements s on s.job_id = j.id
    where s.charge_type = 'adjustment' group by j.id, j.highest_correction having max(s.version) > j.highest_correction`,

  // Every settlement has exactly the entries its amounts call for (zero amounts have none).
  settlement_entries: `
    with expected as (
      select s.settlement_key, 'capture' as entry_type, s.amount as amount, w.wallet_id as debit, w.revenue_account_id as credit
      from settlements s join holds w on w.job_id = s.job_id where s.charge_type = 'capture'
      union all
      select s.settlement_key, 'release_remainder', s.remainder, w.wallet_id, w.revenue_account_id
      from settlements s join holds w on w.job_id = s.job_id where s.charge_type = 'capture'
      union all
      select s.settlement_key, 'release', s.amount, w.wallet_id, w.revenue_account_id
      from settlements s join holds w on w.job_id = s.job_id where s.charge_type = 'release'
      union all
      select s.settlement_key, 'adjustment', abs(s.amount),
             case when s.amount > 0 then w.wallet_id else w.revenue_account_id end,
             case when s.amount > 0 then w.revenue_account_id else w.wallet_id end
      from settlements s join holds w on w.job_id = s.job_id where s.charge_type = 'adjustment'
    ), actual as (
      -- a settlement funded by several grants is one entry per grant: their sum is the settlement's
      select settlement_key, entry_type, sum(amount) as amount, debit_account_id as debit, credit_account_id as credit from ledger_entries
      where entry_type in ('capture', 'release_remainder', 'release', 'adjustment')
      group by settlement_key, entry_type, debit_account_id, credit_account_id
    )
    select coalesce(e.settlement_key, a.settlement_key) as settlement_key, coalesce(e.entry_type, a.entry_type) as entry_type,
           e.amount as expected, a.amount as actual
    from (select * from expected where amount <> 0) e
    full join actual a on a.settlement_key = e.settlement_key and a.entry_type = e.entry_type
    where e.settlement_key is null or a.settlement_key is null
       or e.amount <> a.amount or e.debit <> a.debit or e.credit <> a.credit`,

  // A negative balance raised wallet_overdrawn.
  overdrawn_wallet_alerted: `
    select a.id, a.credits_posted - a.debits_posted as balance from accounts a
    where a.kind = 'wallet' and a.credits_posted - a.debits_posted < 0
      and not exists (select 1 from alerts l where l.class = 'wallet_overdrawn' and l.detail->>'wallet_id' = a.id::text)`,

  // available may only go below zero through charges for delivered work (adjustments
  // that charge) and money paid back to the payer after it was spent (a refund, a lost
  // dispute: CONTRACT.md "Payments"): reservations check it, captures and releases never lower it.
  available_within_overdraft: `
    select a.id, a.credits_posted - a.debits_posted - a.debits_pending as available, coalesce(c.charged, 0) as adjustment_charges
    from accounts a
    left join (select debit_account_id, sum(amount) as charged from ledger_entries where entry_type in ('adjustment', 'refund', 'dispute_loss')
               group by debit_account_id) c
      on c.debit_account_id = a.id
    where a.kind = 'wallet' and a.credits_posted - a.debits_posted - a.debits_pending + coalesce(c.charged, 0) < 0`,

  // Reservation entries: one per share of a hold with a positive amount, together its amount,
  // each the reserve entry its share names, on the share's grant (a hold opened before grants
  // keeps its one reserve entry, which names no grant: migrations/0019).
  reserve_entry_per_hold: `
    select h.job_id, h.amount, sum(e.amount) as entry_amount from holds h
    left join hold_shares s on s.job_id = h.job_id and s.held > 0
    left join ledger_entries e on e.id = s.pending_entry_id and e.flags = 'pending' and e.entry_type = 'reserve' and e.amount = s.held
      and e.debit_account_id = h.wallet_id and e.credit_account_id = h.revenue_account_id
      and (e.grant_id is not distinct from s.grant_id or (e.grant_id is null and e.id = h.pending_entry_id))
    where h.amount > 0 group by h.job_id, h.amount having sum(e.amount) is distinct from h.amount`,

  // Grants (CONTRACT.md "Credit grants"): the wallet is the sum of its grants — balance =
  // Σ remaining − debt, reserved = Σ held — and no grant holds more than it has.
  wallet_is_sum_of_grants: `
    select a.id, a.credits_posted - a.debits_posted as balance, a.debits_pending as reserved, a.debt,
           coalesce(g.remaining, 0) as grants_remaining, coalesce(g.held, 0) as grants_held
    from accounts a left join (select wallet_id, sum(remaining) as remaining, sum(held) as held from grants group by wallet_id) g on g.wallet_id = a.id
    where a.kind = 'wallet' and (a.credits_posted - a.debits_posted <> coalesce(g.remaining, 0) - a.debt or a.debits_pending <> coalesce(g.held, 0))`,

  // Each grant's remaining and held are what its entries say (from its opening, for the
  // grant a wallet's earlier balance became): posted money to or from it, pending holds on it.
  grant_equals_entries: `
    select g.id, g.remaining, g.held, g.opening + coalesce(e.posted, 0) as entries_remaining, coalesce(e.held, 0) + coalesce(o.held, 0) as entries_held
    from grants g
    left join (
      select grant_id,
             sum(case when entry_type = 'debt_repayment' then -amount
                      when flags in ('posted', 'post_pending') then case when credit_account_id = wallet_id then amount else -amount end
                      else 0 end) as posted,
             sum(case flags when 'pending' then amount when 'posted' then 0 else -amount end) filter (where flags <> 'posted') as held
      from ledger_entries where grant_id is not null group by grant_id
    ) e on e.grant_id = g.id
    -- holds opened before grants: their reserve entry names no grant, their share does; what
    -- entries naming no grant resolved of it was resolved before grants, the rest is named since
    left join (
      select s.grant_id,
             sum(s.held - coalesce((select sum(x.amount) from ledger_entries x where x.pending_id = r.id and x.grant_id is null), 0)) as held
      from hold_shares s join ledger_entries r on r.id = s.pending_entry_id where r.grant_id is null group by s.grant_id
    ) o on o.grant_id = g.id
    where g.remaining <> g.opening + coalesce(e.posted, 0) or g.held <> coalesce(e.held, 0) + coalesce(o.held, 0)`,

  // A job's shares are its hold: Σ held = the hold; once resolved, Σ captured = posted and Σ returned = voided.
  shares_match_hold: `
    select h.job_id, h.amount, h.posted, h.voided, sum(s.held) as held, sum(s.captured) as captured, sum(s.returned) as returned
    from holds h left join hold_shares s on s.job_id = h.job_id
    group by h.job_id, h.amount, h.posted, h.voided
    having coalesce(sum(s.held), 0) <> h.amount
        or (h.posted is not null and (coalesce(sum(s.captured), 0) <> h.posted or coalesce(sum(s.returned), 0) <> h.voided))
        or (h.posted is null and coalesce(sum(s.captured + s.returned), 0) <> 0)`,
};

export type Violations = Record<string, unknown[]>;

export async function ledgerViolations(db: Queryable): Promise<Violations> {
  const found: Violations = {};
  for (const [name, sql] of Object.entries(CHECKS)) {
    const result = await db.query(sql);
    if (result.rows.length > 0) found[name] = result.rows.map(stringifyBigints);
  }
  return found;
}

/** Fails with every violated invariant and the rows that violate it. */
export async function assertLedgerInvariants(db: Queryable): Promise<void> {
  const found = await ledgerViolations(db);
  expect(found, 'ledger invariants violated').toEqual({});
}

function stringifyBigints(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'bigint' ? v.toString() : v]));
}
