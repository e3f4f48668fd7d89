-- An accepted webhook delivery is recorded by its event row alone (src/queue/enqueue.ts):
-- webhook_events holds everything its 'accepted' attempt held — provider, event key,
-- tenant, job, payload hash, and received_at (both now() of the one statement that wrote
-- them) — and the job view reads accepted deliveries from it (src/jobs/view.ts). Only
-- repeats, conflicts and mismatches keep a row here. The accepted attempt cost every
-- delivery a heap row and its index entries for nothing (bench/RESULTS.md, "where a
-- job's CPU goes now", point 2).

-- 1. The accepted attempts whose event records the same delivery go: same provider, key
--    and tenant, and the same job, payload hash and instant, so the job view lists each
--    delivery as it did. No trigger guards this table and no key references it.
delete from delivery_attempts a
using webhook_events e
where a.outcome = 'accepted'
  and e.provider = a.provider and e.event_key = a.event_key and e.tenant_id = a.tenant_id
  and e.job_id = a.job_id and e.payload_hash = a.payload_hash and e.received_at = a.received_at;

-- 2. An accepted attempt left after that (no event row, or one that says otherwise) stops
--    the migration, naming the count; nothing is applied. No release of Tally wrote one:
--    the attempt was inserted from the event's own insert, in its statement. So it was
--    written by hand or is damage, and a 200 whose outbox row is missing may be a delivery
--    never billed: someone looks at it before the table changes meaning. Deleting it would
--    lose its only record; keeping it under a constraint added NOT VALID would leave it in
--    a table that says it holds none, unnoticed until a VALIDATE fails.
do $$
declare
  left_over bigint;
begin
  select count(*) into left_over from delivery_attempts where outcome = 'accepted';
  if left_over > 0 then
    raise exception '% accepted delivery attempt(s) have no event row recording the same delivery (provider, event key, tenant, job, payload hash, received_at); look into them (an accepted delivery without its event may be unbilled), then migrate again', left_over;
  end if;
end $$;

-- 3. None again: the outcome check no longer admits 'accepted' (same name, narrower). An
--    older release still running during the upgrade has its accepted deliveries refused
--    whole (event and attempt are one statement, so nothing is half-written): the
--    provider gets a 500 and delivers again, to a new process.
alter table delivery_attempts drop constraint delivery_attempts_outcome_known,
  add constraint delivery_attempts_outcome_known check (outcome in ('already_accepted', 'event_key_conflict', 'event_mismatch'));
