import type { FastifyRequest } from 'fastify';
import { isUuid } from '../../ids.js';
import { getEndpoint, type EndpointRow } from '../../outbound/endpoints.js';
import { tenantScope } from '../auth.js';
import type { ApiContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';

/** The endpoint the caller names, if it may see it: its tenant's own (a tenant key), any (the admin); else 404 alike. */
export async function endpointOf(pool: ApiContext['pool'], request: FastifyRequest, rawId: string): Promise<EndpointRow> {
  const id = rawId.toLowerCase();
  const row = isUuid(id) ? await getEndpoint(pool, id, tenantScope(request)) : null;
  if (!row) throw notFound('webhook endpoint');
  return row;
}

/** Nothing is sent to a disabled endpoint: 409, saying how to enable it. */
export function refuseDisabled(row: EndpointRow, what: string): void {
  if (row.disabled_at !== null) {
    throw new ApiError(
      409,
      'endpoint_disabled',
      `the endpoint is disabled (${row.disabled_reason ?? 'disabled'}): enable it with PATCH {"disabled": false} before ${what}`,
    );
  }
}
