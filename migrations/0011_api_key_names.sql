-- A tenant may hold several API keys (docs/CONTRACT.md "API keys"): each has a name, so
-- the tenant can tell which one to revoke, and the time it last authenticated, so it can
-- tell which ones are still in use.
--
-- The default names the key POST /v1/tenants makes with the tenant, and every key made
-- before this migration (a non-volatile default fills existing rows without rewriting
-- the table). Keys made by POST /v1/api-keys always carry the name they were given.
--
-- last_used_at is kept to the minute, not to the request: authentication writes it only
-- when the stored value is older than a minute (src/api/auth.ts), so a busy key costs
-- one row update a minute, not one per request. Null: never used since this migration.
alter table api_keys
  add column name text not null default 'default'
    constraint api_keys_name_length check (length(name) between 1 and 200),
  add column last_used_at timestamptz;

-- GET /v1/api-keys pages a tenant's keys newest first (UUIDv7 ids); this index serves that
-- walk and every lookup the old one on tenant_id alone served.
create index api_keys_tenant_id_idx on api_keys (tenant_id, id);
drop index api_keys_tenant_idx;
