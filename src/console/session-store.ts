import type { Queryable } from '../db/pool.js';

/**
 * The owner of console_sessions (migrations/0017_console_sessions.sql). Every time is
 * the database's clock, so the servers in front of one database agree on when a session
 * ends, and a test moves a session's end by updating its row, not by waiting.
 */

export type SessionPrincipal = { kind: 'admin' } | { kind: 'tenant'; tenantId: string; apiKeyId: string };

export interface SessionLifetime {
  /** a session unused for this long ends */
  idleSeconds: number;
  /** a session ends this long after sign-in, however busy */
  absoluteSeconds: number;
}

export async function insertSession(
  db: Queryable,
  session: { idHash: Buffer; principal: SessionPrincipal; adminFingerprint: Buffer | null; lifetime: SessionLifetime },
): Promise<void> {
  const { principal, lifetime } = session;
  await db.query(
    `insert into console_sessions (id_hash, principal, tenant_id, api_key_id, admin_fingerprint, idle_expires_at, expires_at)
     values ($1, $2, $3::uuid, $4::uuid, $5, now() + make_interval(secs => least($6::int, $7::int)), now() + make_interval(secs => $7::int))`,
    [
      session.idHash,
      principal.kind,
      principal.kind === 'tenant' ? principal.tenantId : null,
      principal.kind === 'tenant' ? principal.apiKeyId : null,
      session.adminFingerprint,
      lifetime.idleSeconds,
      lifetime.absoluteSeconds,
    ],
  );
}

/**
 * The live session of an id hash, moving its idle expiry forward; null when there is
 * none. Live means: within both expiries, and its credential still good — an admin
 * session's fingerprint is the admin token's now ($2, null when no admin token is set),
 * a tenant session's API key is not revoked (a join, read at every use: the page after a
 * revoke commits is refused). A session found dead is deleted by the same statement.
 */
const USE_SESSION = `
  with found as (
    select s.id_hash, s.principal, s.tenant_id, s.api_key_id
    from console_sessions s
    left join api_keys k on k.id = s.api_key_id and k.tenant_id = s.tenant_id
    where s.id_hash = $1
      and s.idle_expires_at > now() and s.expires_at > now()
      and case s.principal
            when 'admin' then s.admin_fingerprint = $2::bytea
            else k.id is not null and k.revoked_at is null
          end
  ), touched as (
    update console_sessions s
    set last_seen_at = now(), idle_expires_at = least(now() + make_interval(secs => $3::int), s.expires_at)
    from found where s.id_hash = found.id_hash
  ), dead as (
    delete from console_sessions s where s.id_hash = $1 and not exists (select 1 from found)
  )
  select principal, tenant_id, api_key_id from found`;

export async function useSession(
  db: Queryable,
  idHash: Buffer,
  adminFingerprint: Buffer | null,
  lifetime: SessionLifetime,
): Promise<SessionPrincipal | null> {
  const result = await db.query<{ principal: 'admin' | 'tenant'; tenant_id: string | null; api_key_id: string | null }>(USE_SESSION, [
    idHash,
    adminFingerprint,
    lifetime.idleSeconds,
  ]);
  const row = result.rows[0];
  if (!row) return null;
  return row.principal === 'admin' ? { kind: 'admin' } : { kind: 'tenant', tenantId: row.tenant_id!, apiKeyId: row.api_key_id! };
}

/** Sign-out: the row goes, so the cookie's id opens nothing from now on. */
export async function deleteSession(db: Queryable, idHash: Buffer): Promise<void> {
  await db.query('delete from console_sessions where id_hash = $1', [idHash]);
}

/**
 * Every session past either expiry. Run at each
 * sign-in, the only place rows are made, so the table holds at most the sessions started
 * within the last absolute lifetime; a session that is looked up dead goes at once.
 */
export async function deleteExpiredSessions(db: Queryable): Promise<number> {
  const result = await db.query('delete from console_sessions where idle_expires_at <= now() or expires_at <= now()');
  return result.rowCount ?? 0;
}
