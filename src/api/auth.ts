import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Queryable } from '../db/pool.js';
import { ApiError } from './errors.js';

/** Who made a request. Idempotency keys and every tenant query are scoped by it. */
export type Principal = { kind: 'admin' } | { kind: 'tenant'; tenantId: string };

export type Access = 'admin' | 'tenant' | 'tenant_or_admin';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export function principalKey(principal: Principal): string {
  return principal.kind === 'admin' ? 'admin' : `tenant:${principal.tenantId}`;
}

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

function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
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
  select tenant_id from live`;

async function identify(request: FastifyRequest, db: Queryable): Promise<Principal | null> {
  const token = bearer(request);
  if (!token) return null;
  const adminToken = process.env.TALLY_ADMIN_TOKEN;
  if (adminToken && sameSecret(token, adminToken)) return { kind: 'admin' };
  if (!token.startsWith(API_KEY_PREFIX)) return null;
  const result = await db.query<{ tenant_id: string }>(LOOK_UP_API_KEY, [hashApiKey(token)]);
  const tenantId = result.rows[0]?.tenant_id;
  return tenantId ? { kind: 'tenant', tenantId } : null;
}

/**
 * An onRequest hook: 401 for no or a wrong credential, 403 for the wrong kind of one.
 * It runs before the body is read or validated, so a caller without the right
 * credential learns nothing about what a valid request looks like.
 */
export function requireAccess(access: Access, db: Queryable) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const principal = await identify(request, db);
    if (!principal) throw new ApiError(401, 'unauthorized', 'missing or invalid credentials: send Authorization: Bearer <token>');
    if (access === 'admin' && principal.kind !== 'admin') throw new ApiError(403, 'forbidden', 'this call needs the admin token');
    if (access === 'tenant' && principal.kind !== 'tenant') throw new ApiError(403, 'forbidden', 'this call needs a tenant API key');
    request.principal = principal;
  };
}

/** The tenant a tenant-scoped query is restricted to; null for the admin (sees all). */
export function tenantScope(request: FastifyRequest): string | null {
  const principal = request.principal;
  return principal?.kind === 'tenant' ? principal.tenantId : null;
}

export function requireTenant(request: FastifyRequest): string {
  const principal = request.principal;
  if (principal?.kind !== 'tenant') throw new ApiError(403, 'forbidden', 'this call needs a tenant API key');
  return principal.tenantId;
}
