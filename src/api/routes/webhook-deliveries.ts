import { Type } from '@sinclair/typebox';
import { isUuid } from '../../ids.js';
import { listAttempts } from '../../outbound/attempts.js';
import { enqueuePing } from '../../outbound/enqueue.js';
import { getEndpoint } from '../../outbound/endpoints.js';
import { PING_EVENT_TYPE } from '../../outbound/events.js';
import { replayMessage, replayRange } from '../../outbound/replay.js';
import { requireAccess, tenantScope } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { optionalBody } from '../optional-body.js';
import { runIdempotent } from '../idempotency.js';
import { ListOf, ListQueryFields, pageOf, pageRequest } from '../pagination.js';
import { IdParams, IdempotencyHeader, bearerAuth, errors } from '../schemas.js';
import { AttemptView, MessageReplayed, PingSent, RangeReplayed, attemptView } from '../webhook-endpoint-views.js';
import { endpointOf, refuseDisabled } from './webhook-endpoint-access.js';

/**
 * What is sent to a tenant's webhook endpoints (docs/outbound-webhooks.md): a ping, the
 * attempt log, and replays of a time range or of one message. The endpoints themselves
 * are managed in webhook-endpoints.ts.
 */

function instantOf(value: string, param: string): Date {
  const at = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/.test(value) || Number.isNaN(at.getTime())) {
    throw new ApiError(400, 'invalid_request', `${param} must be an RFC 3339 instant, e.g. 2026-12-01T00:00:00Z`, param);
  }
  return at;
}

export function webhookDeliveryRoutes(app: ApiApp, { pool }: ApiContext): void {
  const access = requireAccess('tenant_or_admin', pool);
  const tags = ['webhook endpoints'];

  app.post(
    '/v1/webhook-endpoints/:id/ping',
    {
      onRequest: access,
      ...optionalBody,
      schema: {
        summary: `Queue a ${PING_EVENT_TYPE} message to this endpoint only`,
        tags,
        security: bearerAuth,
        params: IdParams,
        headers: IdempotencyHeader,
        body: Type.Optional(Type.Object({})),
        response: { 202: PingSent, ...errors(401, 404, 409) },
      },
    },
    async (request, reply) => {
      const existing = await endpointOf(pool, request, request.params.id);
      refuseDisabled(existing, 'pinging it');
      return runIdempotent(pool, request, reply, { required: false }, async (tx) => {
        const messageId = await enqueuePing(tx, existing.tenant_id, existing.id);
        return { status: 202, body: { message_id: messageId, endpoint_id: existing.id, type: PING_EVENT_TYPE } };
      });
    },
  );

  app.get(
    '/v1/webhook-endpoints/:id/attempts',
    {
      onRequest: access,
      schema: {
        summary: "The endpoint's delivery attempts, newest first: status, latency, the answer's first 1 KiB, the error",
        tags,
        security: bearerAuth,
        params: IdParams,
        querystring: Type.Object(ListQueryFields),
        response: { 200: ListOf(AttemptView), ...errors(401, 404) },
      },
    },
    async (request) => {
      const existing = await endpointOf(pool, request, request.params.id);
      const page = pageRequest(request.query, isUuid);
      const { data, has_more } = pageOf(await listAttempts(pool, existing.id, page), page);
      return { data: data.map(attemptView), has_more };
    },
  );

  app.post(
    '/v1/webhook-endpoints/:id/replay',
    {
      onRequest: access,
      schema: {
        summary:
          'Send the messages of a time range again (created at or after since, before until): those it subscribes to and those it was sent',
        tags,
        security: bearerAuth,
        params: IdParams,
        headers: IdempotencyHeader,
        body: Type.Object({
          since: Type.String({ maxLength: 100, description: 'RFC 3339' }),
          until: Type.Optional(Type.String({ maxLength: 100, description: 'RFC 3339; default now' })),
        }),
        response: { 202: RangeReplayed, ...errors(401, 404, 409) },
      },
    },
    async (request, reply) => {
      const since = instantOf(request.body.since, 'since');
      const until = request.body.until === undefined ? new Date() : instantOf(request.body.until, 'until');
      if (until <= since) throw new ApiError(400, 'invalid_request', 'until must be later than since', 'until');
      const existing = await endpointOf(pool, request, request.params.id);
      refuseDisabled(existing, 'replaying to it');
      return runIdempotent(pool, request, reply, { required: false }, async (tx) => {
        const replayed = await replayRange(tx, existing.id, since, until);
        return {
          status: 202,
          body: { endpoint_id: existing.id, replayed: replayed.replayed, next_since: replayed.next_since?.toISOString() ?? null },
        };
      });
    },
  );

  app.post(
    '/v1/webhook-messages/:id/replay',
    {
      onRequest: access,
      ...optionalBody,
      schema: {
        summary: 'Send a message again (same webhook-id) to the endpoints it was sent to, or to endpoint_id',
        tags,
        security: bearerAuth,
        params: IdParams,
        headers: IdempotencyHeader,
        body: Type.Optional(Type.Object({ endpoint_id: Type.Optional(Type.String({ format: 'uuid' })) })),
        response: { 202: MessageReplayed, ...errors(401, 404, 409) },
      },
    },
    async (request, reply) => {
      const messageId = request.params.id;
      const endpointId = request.body?.endpoint_id?.toLowerCase() ?? null;
      if (endpointId !== null) {
        const target = await getEndpoint(pool, endpointId, tenantScope(request));
        if (!target) throw notFound('webhook endpoint');
        refuseDisabled(target, 'replaying to it');
      }
      return runIdempotent(pool, request, reply, { required: false }, async (tx) => {
        const replayed = /^msg_[0-9a-f-]{36}$/.test(messageId)
          ? await replayMessage(tx, messageId, tenantScope(request), endpointId)
          : null;
        if (!replayed) throw notFound('webhook message');
        return { status: 202, body: { message_id: messageId, deliveries: replayed.deliveries } };
      });
    },
  );
}
