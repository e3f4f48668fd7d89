-- The list APIs (GET /v1/jobs, /v1/settlements, /v1/events, /v1/alerts) page newest first
-- on a unique key, a tenant's own or everyone's: each page is a short walk down one of
-- these indexes (backwards for newest first) instead of a sort of the whole table.
-- The admin's unfiltered lists of jobs, settlements and alerts walk the primary keys
-- (UUIDv7: id order is creation order).
create index jobs_tenant_id_idx on jobs (tenant_id, id);
create index jobs_wallet_id_idx on jobs (wallet_id, id);
create index settlements_tenant_id_idx on settlements (tenant_id, id);
-- Events have no id of their own: the list's order is (received_at, job_id, seq), unique
-- because (job_id, seq) is.
create index webhook_events_received_idx on webhook_events (received_at, job_id, seq);
create index webhook_events_tenant_received_idx on webhook_events (tenant_id, received_at, job_id, seq);
create index alerts_tenant_id_idx on alerts (tenant_id, id);
-- Also what the job view reads its alerts by.
create index alerts_job_idx on alerts (job_id) where job_id is not null;
