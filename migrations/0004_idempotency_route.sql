-- Idempotency records are scoped by the route (its template) and the canonical ids the
-- path names, never by how a client spelled the URL. `path` now holds the canonical
-- path (the template filled with stored ids); `route` the template, which the cleanup
-- duty selects on (credits' records are kept for ever: their ledger key derives from
-- the Idempotency-Key).
alter table idempotency_keys add column route text;

-- Records written before this migration kept the raw path; map each onto its route.
update idempotency_keys set route = case
  when path ~* '^/v1/wallets/[^/]+/credits$' then '/v1/wallets/:id/credits'
  when path ~* '^/v1/prices/[^/]+$' then '/v1/prices/:model'
  else path
end;

alter table idempotency_keys alter column route set not null;
create index idempotency_keys_route_created_idx on idempotency_keys (route, created_at);
drop index idempotency_keys_created_idx;
