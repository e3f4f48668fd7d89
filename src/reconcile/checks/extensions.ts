import { amount, type Check } from './check.js';

/**
 * An extension's record (job_extensions) against its reserve entries (CONTRACT.md
 * "Long-running jobs": `extension_mismatch`): every record has entries under its key that
 * add up to its amount, and every reserve entry under an extension key belongs to a
 * record of its job. One exception per extension key, whichever side is missing or wrong.
 * Reported, never repaired: which side is wrong is for a person to find.
 */
export const extensionMismatch: Check = {
  class: 'extension_mismatch',
  covers: 'job_extensions',
  sql: `with entries as (
          select e.settlement_key, e.tenant_id, e.job_id, sum(e.amount) as amount
          from ledger_entries e
          where e.entry_type = 'reserve' and e.settlement_key like '%:extension:%'
          group by e.settlement_key, e.tenant_id, e.job_id
        )
        select coalesce(x.settlement_key, e.settlement_key) as key,
               jsonb_build_object('settlement_key', coalesce(x.settlement_key, e.settlement_key),
                                  'job_id', coalesce(x.job_id, e.job_id), 'tenant_id', coalesce(x.tenant_id, e.tenant_id)) as objects,
               jsonb_build_object('recorded', case when x.amount is null then null else ${amount('x.amount')} end,
                                  'entries', case when e.amount is null then null else ${amount('e.amount')} end,
                                  'fault', case when x.settlement_key is null then 'entries_without_extension'
                                                when e.settlement_key is null then 'extension_without_entries'
                                                else 'amounts_differ' end) as detail
        from job_extensions x
        full join entries e on e.settlement_key = x.settlement_key and e.tenant_id = x.tenant_id
        where x.settlement_key is null or e.settlement_key is null or x.amount <> e.amount or x.job_id is distinct from e.job_id`,
};
