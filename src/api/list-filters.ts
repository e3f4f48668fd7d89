import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { MODEL_NAME_MAX_LENGTH } from '../catalog/prices.js';
import { tenantScope } from './auth.js';
import { ApiError } from './errors.js';
import { canonicalInstant } from '../instant.js';

/**
 * Query fields the list APIs share. Each is honoured or refused: a malformed value is a
 * 400 with the field as `param` (the schema, or instantQuery, says what it must be), a
 * field a list does not take is refused by closed-schemas.ts.
 */

const uuidField = (description: string) => Type.Optional(Type.String({ format: 'uuid', description }));

export const TenantIdFilter = {
  tenant_id: uuidField("the admin: only this tenant's objects; a tenant key may name only its own tenant (any other is 403)"),
};
export const JobIdFilter = { job_id: uuidField("only this job's objects") };
export const ModelFilter = Type.Optional(Type.String({ minLength: 1, maxLength: MODEL_NAME_MAX_LENGTH, description: 'a model name, exactly' }));
export const ProviderFilter = Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'a provider name, exactly' }));
export const CreatedRangeFields = {
  created_gte: Type.Optional(Type.String({ maxLength: 100, description: 'an RFC 3339 instant: only objects created at or after it' })),
  created_lt: Type.Optional(Type.String({ maxLength: 100, description: 'an RFC 3339 instant: only objects created before it' })),
};

/**
 * The tenant a list is restricted to. A tenant sees its own objects, whatever it asks:
 * naming its own tenant is allowed, naming any other is 403 (the same for an unknown
 * tenant, so the answer tells nothing about which tenants exist). The admin sees all,
 * or the tenant it names.
 */
export function listTenantOf(request: FastifyRequest, asked: string | undefined): string | null {
  const own = tenantScope(request);
  const named = asked?.toLowerCase();
  if (own === null) return named ?? null;
  if (named !== undefined && named !== own) {
    throw new ApiError(403, 'forbidden', 'a tenant API key lists its own objects only: tenant_id may name only your own tenant, or be left out', 'tenant_id');
  }
  return own;
}

/**
 * An instant of the query string in its canonical text (microseconds kept), or a 400 naming
 * the parameter. Text, not a Date: a Date keeps milliseconds, and rows are stamped to the
 * microsecond, so `created_lt=…678760Z` would have excluded a row created at `…678759Z`.
 */
export function instantQuery(value: string, param: string): string {
  const instant = canonicalInstant(value);
  if (instant === null) throw new ApiError(400, 'invalid_request', `the query parameter ${param} must be an RFC 3339 instant, e.g. 2026-12-01T00:00:00Z`, param);
  return instant;
}

export function createdRange(query: { created_gte?: string; created_lt?: string }): { createdGte: string | null; createdLt: string | null } {
  return {
    createdGte: query.created_gte === undefined ? null : instantQuery(query.created_gte, 'created_gte'),
    createdLt: query.created_lt === undefined ? null : instantQuery(query.created_lt, 'created_lt'),
  };
}
