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

-- Their paths were the raw URL as the client spelled it. Credits' records are kept for
-- ever and name a wallet: spell them canonically (ids are stored lower-case), so a retry
-- after the upgrade through a client that upper-cased the id finds its record (and is
-- refused, its answer sealed under the old path, rather than applied again). Where both
-- spellings exist the canonical one stays and the other is left as it was.
update idempotency_keys k set path = lower(k.path)
where k.route = '/v1/wallets/:id/credits' and k.path <> lower(k.path)
  and not exists (
    select 1 from idempotency_keys o
    where o.principal = k.principal and o.method = k.method and o.key = k.key and o.path = lower(k.path));
update idempotency_keys k set route = '/v1/jobs', path = '/v1/jobs'
where k.path ~ '^/v1/jobs/$'
  and not exists (
    select 1 from idempotency_keys o
    where o.principal = k.principal and o.method = k.method and o.key = k.key and o.path = '/v1/jobs');

-- A stored tenant creation sealed the old way (under a key derived from the
-- Idempotency-Key alone) would give its api_key to anyone holding a dump and a guessable
-- key. It cannot be sealed anew (only a hash of the key is kept): drop it. A retry of
-- such a creation from before the upgrade creates a new tenant.
delete from idempotency_keys where path = '/v1/tenants' and not (response_body ? 'v');

alter table idempotency_keys alter column route set not null;
create index idempotency_keys_route_created_idx on idempotency_keys (route, created_at);
drop index idempotency_keys_created_idx;
