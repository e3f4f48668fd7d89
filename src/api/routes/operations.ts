import { createHash, timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { principalKey, requireAccess } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { optionalBody } from '../optional-body.js';
import { bearerAuth, errors } from '../schemas.js';
import { discardEvent } from '../../jobs/discard.js';
import { DISCARD_NOTE_MAX_LENGTH, requeueDeadEvent, type DiscardedEvent } from '../../queue/index.js';

export function operationRoutes(app: ApiApp, { pool, metrics }: ApiContext): void {
  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics (docs/operations/metrics.md)',
        tags: ['operations'],
        response: {
          200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: Type.String() } } },
          ...errors(401),
        },
      },
    },
    async (request, reply) => {
      const token = request.server.apiSettings.metricsToken;
      if (token) {
        const given = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
        const digest = (s: string) => createHash('sha256').update(s).digest();
        if (!timingSafeEqual(digest(given), digest(token)))
          throw new ApiError(401, 'unauthorized', 'send Authorization: Bearer $TALLY_METRICS_TOKEN');
      }
      const body = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).send(body);
    },
  );

  app.post(
    '/v1/events/:provider/:event_key/retry',
    {
      onRequest: requireAccess('admin', pool),
      ...optionalBody,
      schema: {
        summary: 'Queue a dead-lettered event again',
        tags: ['admin'],
        security: bearerAuth,
        params: Type.Object({ provider: Type.String(), event_key: Type.String() }),
        response: {
          202: Type.Object({ provider: Type.String(), event_key: Type.String(), state: Type.String() }),
          ...errors(401, 403, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const { provider, event_key } = request.params;
      const result = await requeueDeadEvent(pool, provider, event_key);
      if (result === 'not_found') throw notFound('event');
      if (result === 'not_dead')
        throw new ApiError(409, 'event_not_dead', 'only a dead-lettered event can be retried; this one is queued, settled or discarded');
      return reply.code(202).send({ provider, event_key, state: 'pending' });
    },
  );

  app.post(
    '/v1/events/:provider/:event_key/discard',
    {
      onRequest: requireAccess('admin', pool),
      schema: {
        summary: "Set a dead-lettered event aside for good; its job's hold no longer waits for it",
        tags: ['admin'],
        security: bearerAuth,
        params: Type.Object({ provider: Type.String(), event_key: Type.String() }),
        // pattern: at least one character that is not white space
        body: Type.Object({ note: Type.String({ minLength: 1, maxLength: DISCARD_NOTE_MAX_LENGTH, pattern: '\\S' }) }),
        response: { 200: DiscardedEventView, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const { provider, event_key } = request.params;
      const result = await discardEvent(pool, {
        provider,
        eventKey: event_key,
        by: principalKey(request.principal!),
        note: request.body.note,
      });
      if (result === 'not_found') throw notFound('event');
      if (result === 'not_dead')
        throw new ApiError(409, 'event_not_dead', 'only a dead-lettered event can be discarded; this one is queued or settled');
      return discardedEventView(result);
    },
  );
}

const DiscardedEventView = Type.Object({
  provider: Type.String(),
  event_key: Type.String(),
  job_id: Type.String(),
  state: Type.Literal('discarded'),
  discarded_by: Type.String(),
  discarded_at: Type.String(),
  discard_note: Type.String(),
});

function discardedEventView(event: DiscardedEvent) {
  return { ...event, discarded_at: event.discarded_at.toISOString() };
}
