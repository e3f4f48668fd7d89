-- Hot parent rows, found in a CPU profile of the benchmark (bench/RESULTS.md, "Round two"):
-- PostgreSQL keeps the share locks that several transactions hold on one row as a
-- MultiXact, and building those again for every new locker was its largest single cost.
--
-- An event's provider is its job's provider: the foreign key now goes to the job row,
-- (job_id, provider) → jobs (id, provider), which intake locks anyway (the UPDATE of
-- jobs.event_seq in the same statement), instead of to the provider's one row, which
-- every intake statement of every job share-locked. It says more than the two keys it
-- replaces: the event's job exists AND belongs to that provider.
alter table jobs add constraint jobs_id_provider_key unique (id, provider);
alter table webhook_events add constraint webhook_events_job_provider_fkey
  foreign key (job_id, provider) references jobs (id, provider) not valid;
alter table webhook_events validate constraint webhook_events_job_provider_fkey;
alter table webhook_events drop constraint webhook_events_provider_fkey;
alter table webhook_events drop constraint webhook_events_job_fkey;

-- Room on each page for the updates that change no indexed column (jobs.event_seq at
-- intake, an event's lease, an account's projection): such an update can then stay on
-- its page as a heap-only tuple and insert into none of the table's indexes. Applies to
-- pages written from now on.
alter table jobs set (fillfactor = 80);
alter table webhook_events set (fillfactor = 80);
alter table accounts set (fillfactor = 50);
