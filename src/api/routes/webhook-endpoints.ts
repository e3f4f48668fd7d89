import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { isUuid, newId } from '../../ids.js';
import { checkRegistration, DestinationRefused, InvalidDestinationUrl } from '../../outbound/destinations.js';
import { insertEndpoint, listEndpoints, rotateSecret, updateEndpoint } from '../../outbound/endpoints.js';
import { ALL_EVENTS } from '../../outbound/events.js';
import { newEndpointSecret } from '../../outbound/signing.js';
import { principalKey, requireAccess, tenantScope } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { optionalBody } from '../optional-body.js';
import { runIdempotent } from '../idempotency.js';
import { TenantIdFilter, listTenantOf } from '../list-filters.js';
import { ListOf, ListQueryFields, pageOf, pageRequest } from '../pagination.js';
import { IdParams, IdempotencyHeader, bearerAuth, errors } from '../schemas.js';
import {
  Description,
  EndpointCreated,
  EndpointUrl,
  EndpointView,
  EventTypes,
  GraceSeconds,
  SecretRotated,
  endpointView,
} from '../webhook-endpoint-views.js';
import { endpointOf } from './webhook-endpoint-access.js';
import { webhookDeliveryRoutes } from './webhook-deliveries.js';

/**
 * Outbound webhooks (docs/outbound-webhooks.md): a tenant's endpoints and their secrets;
 * pings, the attempt log and replays are in webhook-deliveries.ts. A tenant manages its
 * own; the admin any tenant's (naming it with tenant_id to create). Another tenant's
 * endpoint or message answers 404 like an unknown one.
 */

const TenantId = Type.String({
  format: 'uuid',
  description: 'the admin: the tenant the endpoint is for; a tenant key may name only its own tenant (any other is 403)',
});
const DEFAULT_GRACE_SECONDS = 86_400;

/** The admin's tenant, or the tenant's own (another one named is 403, as in the lists). */
function ownerOf(request: FastifyRequest, asked: string | undefined): string | null {
  const own = tenantScope(request);
  const named = asked?.toLowerCase();
  if (own === null) return named ?? null;
  if (named !== undefined && named !== own) {
    throw new ApiError(
      403,
      'forbidden',
      'a tenant API key manages its own webhook endpoints only: tenant_id may name only your own tenant, or be left out',
      'tenant_id',
    );
  }
  return own;
}

/** ["*"] alone when it is there: it already means every type. */
function normalEvents(events: readonly string[]): string[] {
  return events.includes(ALL_EVENTS) ? [ALL_EVENTS] : [...events];
}

export function webhookEndpointRoutes(app: ApiApp, context: ApiContext): void {
  const { pool } = context;
  // Parsed once, at start (api-settings.ts): a malformed TALLY_OUTBOUND_ALLOW / _DENY stops the server with its reason.
  const policy = app.apiSettings.destinations;
  const access = requireAccess('tenant_or_admin', pool);
  const tags = ['webhook endpoints'];

  app.post(
    '/v1/webhook-endpoints',
    {
      onRequest: access,
      schema: {
        summary: "Register an endpoint for the tenant's outbound webhooks; its signing secret is shown only in this answer",
        tags,
        security: bearerAuth,
        headers: IdempotencyHeader,
        body: Type.Object({
          url: EndpointUrl,
          events: EventTypes,
          description: Type.Optional(Description),
          tenant_id: Type.Optional(TenantId),
        }),
        response: { 201: EndpointCreated, ...errors(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const tenantId = ownerOf(request, request.body.tenant_id);
      if (tenantId === null)
        throw new ApiError(
          400,
          'invalid_request',
          'tenant_id is required with the admin token: the tenant the endpoint is for',
          'tenant_id',
        );
      const url = await checkedUrl(request.body.url);
      return runIdempotent(pool, request, reply, { required: false }, async (tx) => {
        const secret = newEndpointSecret();
        const row = await insertEndpoint(tx, {
          id: newId(),
          tenantId,
          url,
          events: normalEvents(request.body.events),
          description: request.body.description ?? null,
          secret,
        });
        if (!row) throw notFound('tenant');
        return { status: 201, body: { ...endpointView(row), secret } };
      });
    },
  );

  /** The registration check, answered as the API's errors. */
  async function checkedUrl(url: string): Promise<string> {
    try {
      return (await checkRegistration(url, policy)).toString();
    } catch (error) {
      if (error instanceof InvalidDestinationUrl) throw new ApiError(400, 'invalid_url', error.message, 'url');
      if (error instanceof DestinationRefused) throw new ApiError(422, 'destination_not_allowed', error.message, 'url');
      throw error;
    }
  }

  app.get(
    '/v1/webhook-endpoints',
    {
      onRequest: access,
      schema: {
        summary: "Webhook endpoints, newest first (a tenant its own; the admin all, or one tenant's with tenant_id)",
        tags,
        security: bearerAuth,
        querystring: Type.Object({ ...ListQueryFields, ...TenantIdFilter }),
        response: { 200: ListOf(EndpointView), ...errors(401, 403) },
      },
    },
    async (request) => {
      const page = pageRequest(request.query, isUuid);
      const { data, has_more } = pageOf(await listEndpoints(pool, listTenantOf(request, request.query.tenant_id), page), page);
      return { data: data.map(endpointView), has_more };
    },
  );

  app.get(
    '/v1/webhook-endpoints/:id',
    {
      onRequest: access,
      schema: {
        summary: 'One webhook endpoint',
        tags,
        security: bearerAuth,
        params: IdParams,
        response: { 200: EndpointView, ...errors(401, 404) },
      },
    },
    async (request) => endpointView(await endpointOf(pool, request, request.params.id)),
  );

  app.patch(
    '/v1/webhook-endpoints/:id',
    {
      onRequest: access,
      schema: {
        summary: 'Change what an endpoint receives, its description, or disable / enable it (enabling clears its failure count)',
        tags,
        security: bearerAuth,
        params: IdParams,
        body: Type.Object({
          events: Type.Optional(EventTypes),
          description: Type.Optional(Type.Union([Description, Type.Null()])),
          disabled: Type.Optional(Type.Boolean()),
        }),
        response: { 200: EndpointView, ...errors(401, 404) },
      },
    },
    async (request) => {
      const existing = await endpointOf(pool, request, request.params.id);
      const body = request.body;
      const row = await updateEndpoint(pool, existing.id, tenantScope(request), {
        events: body.events && normalEvents(body.events),
        description: body.description,
        disabled: body.disabled,
        reason: `disabled by ${principalKey(request.principal!)}`,
      });
      if (!row) throw notFound('webhook endpoint');
      return endpointView(row);
    },
  );

  app.post(
    '/v1/webhook-endpoints/:id/rotate-secret',
    {
      onRequest: access,
      ...optionalBody,
      schema: {
        summary: 'A new signing secret, shown once; the old one keeps signing beside it for grace_seconds (default 24 h)',
        tags,
        security: bearerAuth,
        params: IdParams,
        headers: IdempotencyHeader,
        body: Type.Optional(Type.Object({ grace_seconds: Type.Optional(GraceSeconds) })),
        response: { 200: SecretRotated, ...errors(401, 404) },
      },
    },
    async (request, reply) => {
      const existing = await endpointOf(pool, request, request.params.id);
      return runIdempotent(pool, request, reply, { required: false }, async (tx) => {
        const secret = newEndpointSecret();
        const row = await rotateSecret(tx, existing.id, tenantScope(request), secret, request.body?.grace_seconds ?? DEFAULT_GRACE_SECONDS);
        if (!row) throw notFound('webhook endpoint');
        return {
          status: 200,
          body: { id: row.id, secret, previous_secret_expires_at: row.previous_secret_expires_at?.toISOString() ?? null },
        };
      });
    },
  );

  // Pings, the attempt log and replays (webhook-deliveries.ts), registered here to keep the routes' order.
  webhookDeliveryRoutes(app, context);
}
