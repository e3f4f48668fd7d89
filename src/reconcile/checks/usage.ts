import type { Check } from './check.js';

/**
 * Usage with zero-valued dimensions dropped: a dimension reported as 0 and one not
 * reported are billed alike, so they must compare alike. jsonb is canonical (key
 * order is not significant), so equal usage compares and prints equal.
 */
function nonzeroUsage(expression: string): string {
  return `(select jsonb_object_agg(u.key, u.value) from jsonb_each(${expression}) u where u.value <> '0'::jsonb)`;
}

/**
 * The newest import per (provider, job ref) against the newest usage we applied
 * (the capture's, or the highest adjustment's); zero dimensions count as absent.
 * Usage the provider reports for a job we billed nothing for — released, not
 * settled yet, or no job with that ref at all — is a mismatch too: the provider
 * says work was done. The fingerprint includes both usages, so the same
 * disagreement found again is the same exception, and different numbers (a newer
 * import, a correction) are a new one.
 */
export const usageMismatch: Check = {
  class: 'usage_mismatch',
  covers: 'provider_usage',
  sql: `with latest_import as (
          select distinct on (provider, provider_job_ref) provider, provider_job_ref, usage, import_id
          from provider_usage order by provider, provider_job_ref, imported_at desc, import_id desc
        ), accepted as (
          select distinct on (s.job_id) s.job_id, s.snapshot->'usage' as usage
          from settlements s where s.snapshot is not null
          order by s.job_id, s.version desc, s.created_at desc
        ), compared as (
          select i.provider, i.provider_job_ref, i.import_id, i.usage as reported, j.id as job_id, a.usage as accepted,
                 coalesce(${nonzeroUsage('i.usage')}, '{}') as reported_nonzero,
                 coalesce(${nonzeroUsage('a.usage')}, '{}') as accepted_nonzero
          from latest_import i
          left join jobs j on j.provider = i.provider and j.provider_job_ref = i.provider_job_ref
          left join accepted a on a.job_id = j.id
        )
        select coalesce(c.job_id::text, c.provider || '/' || c.provider_job_ref) || ':'
                 || md5(c.accepted_nonzero::text || ' ' || c.reported_nonzero::text) as key,
               jsonb_build_object('job_id', c.job_id, 'provider', c.provider, 'provider_job_ref', c.provider_job_ref) as objects,
               jsonb_build_object('accepted', c.accepted, 'provider_reported', c.reported, 'import_id', c.import_id) as detail
        from compared c
        where c.accepted_nonzero <> c.reported_nonzero`,
};
