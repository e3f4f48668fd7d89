-- The job view lists every delivery of the job's webhooks (the console's timeline):
-- found by job, not by scanning every delivery ever received.
create index delivery_attempts_job_idx on delivery_attempts (job_id, received_at) where job_id is not null;
