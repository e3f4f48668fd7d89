import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../db/pool.js';

/**
 * Who a bearer credential is: the admin token in force, or a live tenant API key. The
 * API authenticates each request with it (api/auth.ts); the console's sign-in uses it
 * once, to start a session that keeps the key's id (never the key).
 */

const API_KEY_PREFIX = 'tk_';

export function newApiKey(): string {
  return `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** API keys are random 256-bit values, so one SHA-256 (no salt, no KDF) is enough to store them. */
export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * A live key's tenant, read from the database on every request (no cache: the request
 * after a revoke commits is refused). The same statement keeps the key's last_used_at,
 * to the minute: it writes only when the stored value is older than a minute, so a busy
 * key costs one row update a minute, not one per request, and nothing runs after the
 * answer that could fail unseen. Concurrent first uses of a minute queue briefly on the
 * row and the later ones, re-reading it, write nothing.
 */
const LOOK_UP_API_KEY = `
  with live as (
    select id, tenant_id from api_keys where key_hash = $1 and revoked_at is null
  ), touched as (
    update api_keys k set last_used_at = now()
    from live
    where k.id = live.id and (k.last_used_at is null or k.last_used_at < now() - interval '1 minute')
  )
  select id, tenant_id from live`;

/** A credential's principal, with the id of the API key when it is one. */
export type CredentialPrincipal = { kind: 'admin' } | { kind: 'tenant'; tenantId: string; apiKeyId: string };

/** The principal of a bearer credential, or null for none; `adminToken` is the one in force (unset: no admin). */
export async function principalOfCredential(
  db: Queryable,
  token: string,
  adminToken: string | undefined,
): Promise<CredentialPrincipal | null> {
  if (adminToken && sameSecret(token, adminToken)) return { kind: 'admin' };
  if (!token.startsWith(API_KEY_PREFIX)) return null;
  const result = await db.query<{ id: string; tenant_id: string }>(LOOK_UP_API_KEY, [hashApiKey(token)]);
  const row = result.rows[0];
  return row ? { kind: 'tenant', tenantId: row.tenant_id, apiKeyId: row.id } : null;
}
