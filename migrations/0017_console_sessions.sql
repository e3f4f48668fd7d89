-- The console's sign-in sessions (src/console/session-store.ts owns this table). The
-- browser holds a random session id; only its SHA-256 is stored here, with whom it signed
-- in: the admin (with an HMAC of the admin token in force, so a changed TALLY_ADMIN_TOKEN
-- ends every admin session) or a tenant and the id of the API key it signed in with (never
-- the key: a session dies with its key's revocation, checked by a join at every use).
-- A session ends at the first of: sign-out (its row is deleted), idle_expires_at (moved
-- forward at each use, never past expires_at) and expires_at (fixed at sign-in). Expired
-- rows are deleted at each sign-in, so the table holds about one absolute lifetime of
-- sign-ins and needs no index for the sweep.
create table console_sessions (
  id_hash bytea primary key constraint console_sessions_id_hash_length check (length(id_hash) = 32),
  principal text not null constraint console_sessions_principal_check check (principal in ('admin', 'tenant')),
  tenant_id uuid constraint console_sessions_tenant_fkey references tenants (id),
  api_key_id uuid constraint console_sessions_api_key_fkey references api_keys (id),
  admin_fingerprint bytea,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  idle_expires_at timestamptz not null,
  expires_at timestamptz not null,
  constraint console_sessions_principal_fields check (
    case principal
      when 'admin' then admin_fingerprint is not null and tenant_id is null and api_key_id is null
      else admin_fingerprint is null and tenant_id is not null and api_key_id is not null
    end
  )
);
