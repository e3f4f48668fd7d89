import { amount, type Check } from './check.js';

export const terminalJobWithoutSettlement: Check = {
  class: 'terminal_job_without_settlement',
  covers: 'jobs',
  sql: `select j.id::text as key, jsonb_build_object('job_id', j.id, 'tenant_id', j.tenant_id) as objects,
               jsonb_build_object('state', j.state) as detail
        from jobs j
        where j.state in ('captured', 'released')
          and not exists (select 1 from settlements s where s.job_id = j.id and s.charge_type in ('capture', 'release'))`,
};

/**
 * Set-based: every entry a settlement needs, anti-joined with the entries at once (a
 * hash join over the table), not one index probe per settlement and type — at a
 * million entries that was 333,000 probes and most of the run.
 */
export const settlementWithoutEntries: Check = {
  class: 'settlement_without_entries',
  covers: 'settlements',
  sql: `with expected as (
          select s.settlement_key, s.job_id, s.charge_type, s.amount, x.entry_type, x.position
          from settlements s
          cross join lateral (values
            ('capture', 1, s.charge_type = 'capture' and s.amount > 0),
            ('release_remainder', 2, s.charge_type = 'capture' and s.remainder > 0),
            ('release', 3, s.charge_type = 'release' and s.amount > 0),
            ('adjustment', 4, s.charge_type = 'adjustment' and s.amount <> 0)
          ) as x(entry_type, position, wanted)
          where x.wanted
        )
        select m.settlement_key as key, jsonb_build_object('settlement_key', m.settlement_key, 'job_id', m.job_id) as objects,
               jsonb_build_object('charge_type', m.charge_type, 'amount', ${amount('m.amount')},
                                  'missing', array_agg(m.entry_type order by m.position)) as detail
        from expected m
        where not exists (select 1 from ledger_entries e where e.settlement_key = m.settlement_key and e.entry_type = m.entry_type)
        group by m.settlement_key, m.job_id, m.charge_type, m.amount`,
};
