import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { insertApiKey, listApiKeys, revokeApiKey, type ApiKeyRow } from '../../catalog/api-keys.js';
import { isUuid, newId } from '../../ids.js';
import { hashApiKey, newApiKey, requireAccess, tenantScope } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { optionalBody } from '../optional-body.js';
import { runIdempotent } from '../idempotency.js';
import { TenantIdFilter, listTenantOf } from '../list-filters.js';
import { ListOf, ListQueryFields, pageOf, pageRequest } from '../pagination.js';
import { IdParams, IdempotencyHeader, bearerAuth, errors } from '../schemas.js';

/**
 * A tenant's named API keys (docs/CONTRACT.md "API keys"): made, listed and revoked by the
 * tenant itself, or by the admin naming the tenant. A key is shown once, in the answer
 * that made it (and that answer's idempotent replay, sealed like a new tenant's); it is
 * stored as its SHA-256 only, and no view ever carries it or its hash.
 */

const Instant = Type.String({ format: 'date-time', description: 'RFC 3339, UTC' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const KeyName = Type.String({ minLength: 1, maxLength: 200, description: 'yours, to tell keys apart, e.g. "production" or "ci"' });
const TenantId = Type.String({ format: 'uuid', description: "the admin: the tenant whose keys these are; a tenant key may name only its own tenant (any other is 403)" });

const ApiKeyView = Type.Object(
  {
    id: Type.String(),
    tenant_id: Type.String(),
    name: Type.String(),
    created_at: Instant,
    last_used_at: Nullable(Type.String({ format: 'date-time', description: 'when the key last authenticated, to the minute; null: never' })),
    revoked_at: Nullable(Type.String({ format: 'date-time', description: 'when the key was revoked; from then on it is refused (401)' })),
  },
  { description: 'an API key without the key: it is shown only when made' },
);
const ApiKeyCreated = Type.Object(
  {
    id: Type.String(),
    tenant_id: Type.String(),
    name: Type.String(),
    api_key: Type.String({ description: 'the bearer credential: shown only in this answer and its idempotent replay' }),
    created_at: Instant,
  },
  { description: 'a new API key, with the key itself' },
);

function apiKeyView(row: ApiKeyRow) {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    name: row.name,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
  };
}

/**
 * Whose key a create or revoke is about: the list APIs' rule (listTenantOf), worded for
 * a write. A tenant's own, whatever it asks — naming its own tenant is allowed, any other
 * is 403, so an unknown tenant answers alike and nothing tells which tenants exist; the
 * admin's is the tenant it names, or null.
 */
function keyOwnerOf(request: FastifyRequest, asked: string | undefined): string | null {
  const own = tenantScope(request);
  const named = asked?.toLowerCase();
  if (own === null) return named ?? null;
  if (named !== undefined && named !== own) {
    throw new ApiError(403, 'forbidden', 'a tenant API key manages its own keys only: tenant_id may name only your own tenant, or be left out', 'tenant_id');
  }
  return own;
}

export function apiKeyRoutes(app: ApiApp, { pool }: ApiContext): void {
  app.post(
    '/v1/api-keys',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: 'Make a named API key for the tenant (the admin names the tenant); the key is shown only in this answer and its idempotent replay',
        tags: ['api keys'],
        security: bearerAuth,
        headers: IdempotencyHeader,
        body: Type.Object({ name: KeyName, tenant_id: Type.Optional(TenantId) }),
        response: { 201: ApiKeyCreated, ...errors(401, 403, 404) },
      },
    },
    async (request, reply) => {
      // Refusals about who may ask come first: they are not the Idempotency-Key's outcome.
      const tenantId = keyOwnerOf(request, request.body.tenant_id);
      if (tenantId === null) throw new ApiError(400, 'invalid_request', 'tenant_id is required with the admin token: the tenant the key is for', 'tenant_id');
      return runIdempotent(pool, request, reply, { required: false }, async (tx) => {
        const apiKey = newApiKey();
        const row = await insertApiKey(tx, { id: newId(), tenantId, name: request.body.name, keyHash: hashApiKey(apiKey) });
        if (!row) throw notFound('tenant');
        return { status: 201, body: { id: row.id, tenant_id: row.tenant_id, name: row.name, api_key: apiKey, created_at: row.created_at.toISOString() } };
      });
    },
  );

  app.get(
    '/v1/api-keys',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: "API keys, newest first, revoked ones included (a tenant its own; the admin all, or one tenant's with tenant_id); never the key itself",
        tags: ['api keys'],
        security: bearerAuth,
        querystring: Type.Object({ ...ListQueryFields, ...TenantIdFilter }),
        response: { 200: ListOf(ApiKeyView), ...errors(400, 401, 403) },
      },
    },
    async (request) => {
      const page = pageRequest(request.query, isUuid);
      const { data, has_more } = pageOf(await listApiKeys(pool, listTenantOf(request, request.query.tenant_id), page), page);
      return { data: data.map(apiKeyView), has_more };
    },
  );

  app.delete(
    '/v1/api-keys/:id',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      ...optionalBody,
      schema: {
        summary: 'Revoke an API key: refused (401) from the next request on; revoking again answers the same',
        tags: ['api keys'],
        security: bearerAuth,
        params: IdParams,
        querystring: Type.Object({ tenant_id: Type.Optional(TenantId) }),
        response: { 200: ApiKeyView, ...errors(401, 403, 404) },
      },
    },
    async (request) => {
      const tenantId = keyOwnerOf(request, request.query.tenant_id);
      const row = isUuid(request.params.id) ? await revokeApiKey(pool, request.params.id.toLowerCase(), tenantId) : null;
      if (!row) throw notFound('API key');
      return apiKeyView(row);
    },
  );
}
