import { Type } from '@sinclair/typebox';
import { DOCUMENTED_WEBHOOK_BODIES } from '../webhooks/adapters/documented-bodies.js';

interface RouteDocs {
  schema: Record<string, unknown>;
  url: string;
}

/**
 * @fastify/swagger's `transform`: the webhook route validates no body (it reads raw bytes,
 * and each provider kind has its own format), so its document gets the bodies of every
 * kind here, for the OpenAPI document only, never for validation.
 */
export function documentWebhookBodies({ schema, url }: RouteDocs): RouteDocs {
  if (url !== '/v1/webhooks/:provider' || !schema) return { schema, url };
  return {
    url,
    schema: {
      ...schema,
      body: Type.Union(Object.values(DOCUMENTED_WEBHOOK_BODIES), {
        description: "the provider's own webhook body, by the provider's kind; any content type, read as raw bytes (signatures are over them)",
      }),
    },
  };
}
