-- Usage fetched from a provider's API before settling (named adapters whose webhooks carry
-- no usage: OpenAI, fal). See CONTRACT.md "Named provider adapters" and worker/usage-fetch.ts.

-- The state a job left when it moved to usage_pending, restored when the fetched object turns
-- out not to be this job's (event_mismatch: nothing billed, the job goes on as before).
-- Only meaningful while the job is usage_pending; a settlement moving it on leaves it behind.
alter table jobs add column resume_state text
  constraint jobs_resume_state_known check (resume_state in ('reserved', 'running', 'cancel_requested'));
alter table jobs add constraint jobs_usage_pending_resumable
  check (state <> 'usage_pending' or resume_state is not null);

-- When the fetched usage was stored on the event (`usage` stays null when the provider
-- reported none, e.g. a failed batch): set means "fetched", so a re-claim settles at once.
alter table webhook_events add column usage_fetched_at timestamptz;
-- Fetch failures, counted apart from settle attempts: they back off but never dead-letter.
alter table webhook_events add column fetch_attempts integer not null default 0;
