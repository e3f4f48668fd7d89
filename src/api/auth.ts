import type { FastifyReply, FastifyRequest } from 'fastify';
import { principalOfCredential } from '../catalog/credentials.js';
import type { Queryable } from '../db/pool.js';
import { inProcessPrincipal, type Principal } from '../principal.js';
import { ApiError } from './errors.js';

export type { Principal } from '../principal.js';
export { hashApiKey, newApiKey } from '../catalog/credentials.js';

export type Access = 'admin' | 'tenant' | 'tenant_or_admin';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export function principalKey(principal: Principal): string {
  return principal.kind === 'admin' ? 'admin' : `tenant:${principal.tenantId}`;
}

function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

async function identify(request: FastifyRequest, db: Queryable): Promise<Principal | null> {
  // The console's in-process calls (src/principal.ts) name their principal by a
  // ticket; a request that sends the header and is not one of those is refused here.
  const ticketed = inProcessPrincipal(request);
  if (ticketed !== undefined) return ticketed;
  const token = bearer(request);
  if (!token) return null;
  const principal = await principalOfCredential(db, token, request.server.apiSettings.adminToken ?? undefined);
  if (!principal) return null;
  return principal.kind === 'admin' ? principal : { kind: 'tenant', tenantId: principal.tenantId };
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
