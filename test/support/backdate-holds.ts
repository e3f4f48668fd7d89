import type { Queryable } from '../../src/db/pool.js';

/**
 * Moves a tenant's open holds `interval` into the past, as if they had been reserved
 * then, together with the spend counted for them. A hold's created_at is the instant of
 * its reservation, and the reservation counted its reserve entries in that instant's UTC
 * day and month (spend_periods, migrations/0014); reconciliation recomputes those
 * counters from the holds' created_at (spend_period_drift). Moving the hold alone is a
 * ledger nobody could have written, and across a UTC midnight or month end — a test run
 * in the first hour of a day — it is reported as drift. So the counters move with it:
 * the reserve entries leave the period they were counted in and count in the earlier one.
 *
 * Open holds only: a resolved hold's capture counted in its settlement's period, which
 * this does not move.
 */
export async function backdateOpenHolds(db: Queryable, tenantId: string, interval: string): Promise<void> {
  await db.query(
    `with moved as (
       update holds h set created_at = h.created_at - $2::interval
       where h.tenant_id = $1 and h.resolved_by is null
       returning h.job_id, h.created_at as at, h.created_at + $2::interval as was
     ), shifts as (
       select e.currency, x.at, x.sign * e.amount as amount
       from moved m join ledger_entries e on e.job_id = m.job_id and e.entry_type = 'reserve'
       cross join lateral (values (m.was, -1), (m.at, 1)) as x(at, sign)
     ), deltas as (
       select s.currency, p.period, p.starts_on, sum(s.amount) as spent
       from shifts s
       cross join lateral (values ('day', (s.at at time zone 'UTC')::date),
                                  ('month', date_trunc('month', s.at at time zone 'UTC')::date)) as p(period, starts_on)
       group by s.currency, p.period, p.starts_on
       having sum(s.amount) <> 0
     )
     insert into spend_periods (tenant_id, currency, period, starts_on, spent)
     select $1, currency, period, starts_on, spent from deltas
     on conflict on constraint spend_periods_pkey do update set spent = spend_periods.spent + excluded.spent`,
    [tenantId, interval],
  );
}
