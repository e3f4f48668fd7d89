-- A claim takes one tenant's events (src/queue/events-table.ts): the first ready event in
-- (run_after, seq) names the tenant (webhook_events_claim_order_idx), then this index
-- walks that tenant's ready events in the same order and stops at the batch's limit.
-- Partial like the claim order index: a settled event leaves it, so it stays the size of
-- the backlog, and an event costs it two entries (accepted, claimed).
create index webhook_events_tenant_claim_idx on webhook_events (tenant_id, run_after, seq) where state in ('pending', 'processing');

-- Intake keeps providers in memory while it listens here (src/catalog/provider-cache.ts):
-- every change, whoever makes it (the API, or SQL by hand), empties those caches at its
-- commit. Per statement: one notification however many rows changed.
create function providers_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('tally_providers', '');
  return null;
end $$;
create trigger providers_changed after insert or update or delete or truncate on providers
  for each statement execute function providers_changed();
