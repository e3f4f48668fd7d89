import { Type } from '@sinclair/typebox';
import { receiveWebhook } from '../../intake/receive.js';
import type { ApiApp, ApiContext } from '../context.js';
import { countAccepted, refusal } from '../webhook-outcome.js';
import { BODY_LIMIT_BYTES } from '../limits.js';
import { errors } from '../schemas.js';

export function webhookRoutes(app: ApiApp, { pool, metrics, providers, deliveries }: ApiContext): void {
  // Signatures are over the exact bytes: this scope keeps the body as a Buffer, never
  // parsed and re-serialised.
  app.register(async (scope: ApiApp) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES }, (_request, body, done) => done(null, body));
    scope.post(
      '/v1/webhooks/:provider',
      {
        schema: {
          summary: 'Receive a provider webhook (signed). 200 means durably accepted, not yet settled',
          tags: ['webhooks'],
          params: Type.Object({ provider: Type.String({ maxLength: 100 }) }),
          response: {
            200: Type.Object({ status: Type.Union([Type.Literal('accepted'), Type.Literal('already_accepted')]), event_key: Type.String() }),
            ...errors(400, 401, 404, 409, 413, 422, 503),
          },
        },
      },
      async (request) => {
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        try {
          const result = await receiveWebhook(pool, providers, request.params.provider, raw, request.headers, deliveries);
          countAccepted(metrics, request.params.provider, result.status);
          return { status: result.status, event_key: result.eventKey };
        } catch (error) {
          throw refusal(request.log, metrics, request.params.provider, error);
        }
      },
    );
  });
}
