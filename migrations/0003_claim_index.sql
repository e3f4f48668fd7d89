-- The claim query asks, for each ready event, whether an earlier event of the same job
-- is still unsettled. This partial index answers that with one probe per event,
-- instead of a bitmap over every ready event (which grew with the backlog).
create index webhook_events_unsettled_by_job_idx on webhook_events (job_id, seq) where state in ('pending', 'processing');
