import { readFileSync } from 'node:fs';
import type { FastifyDynamicSwaggerOptions, SwaggerTransform } from '@fastify/swagger';
import type { FastifySchema } from 'fastify';
import { operationOf } from './operation-ids.js';
import { documentWebhookBodies } from './webhook-docs.js';

/**
 * GET /openapi.json: how @fastify/swagger turns the routes' schemas into the document.
 *
 * OpenAPI 3.1, because its Schema Object is JSON Schema (2020-12): the very schemas ajv
 * validates requests with (TypeBox's `propertyNames` on metadata keys, `examples` arrays,
 * `const`, `type: 'null'`) are legal in the document as they are. OpenAPI 3.0.3 has none
 * of those, and a 3.0 document would need them rewritten or dropped, so it would describe
 * less than the server enforces. test/e2e/openapi-document.test.ts checks the document
 * with two independent validators and generates a typed client from it.
 *
 * Centrally here, not in each route: every operation's operationId and, for the few that
 * take no bearer token, its `security` (operation-ids.ts); the servers; the security schemes.
 */

export const OPENAPI_VERSION = '3.1.0';

/** package.json's version; the same path from src/api/ and dist/api/. */
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

type RouteSchema = FastifySchema & { hide?: boolean; security?: unknown; description?: string };

/**
 * @fastify/swagger's `transform`, per route, on a copy (the route's own schema is the one
 * ajv validates with and stays as it is): the webhook bodies (webhook-docs.ts), then the
 * operation's name and, where the table gives one, its security and the reason for it.
 */
const nameOperation: SwaggerTransform = ({ schema, url, route }) => {
  const documented = documentWebhookBodies({ schema: schema as Record<string, unknown>, url }) as { schema: RouteSchema; url: string };
  const method = typeof route.method === 'string' ? route.method : '';
  const operation = operationOf(method, url);
  if (!documented.schema || documented.schema.hide || !operation) return documented;
  const own = documented.schema;
  const security = own.security === undefined && operation.security ? operation.security : undefined;
  return {
    url: documented.url,
    schema: {
      ...own,
      operationId: operation.id,
      ...(security ? { security: security.requirements, description: own.description ?? security.why } : {}),
    } as FastifySchema,
  };
};

/** @fastify/swagger's options: a fresh object per app, as the plugin keeps parts of it in the document. */
export function openApiOptions(): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: OPENAPI_VERSION,
      info: { title: 'Tally', version: VERSION, description: 'Exactly-once billing for wallet-funded asynchronous AI inference jobs' },
      // Relative: the server that serves this document (OpenAPI resolves it against the
      // document's own URL), wherever it runs; a client gives its base URL itself.
      servers: [{ url: '/', description: 'the Tally server that serves this document' }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: "the admin token (TALLY_ADMIN_TOKEN) or a tenant's API key",
          },
          metricsToken: { type: 'http', scheme: 'bearer', description: 'TALLY_METRICS_TOKEN, when the server has one' },
        },
      },
    },
    transform: nameOperation,
    // Shared schemas (app.addSchema) are named in components by their $id, `Error`, not
    // `def-0`: generated clients call the type after it.
    refResolver: {
      buildLocalReference(json, _baseUri, _fragment, i) {
        if (typeof json.$id !== 'string') return `def-${i}`;
        json.title ??= json.$id;
        return json.$id;
      },
    },
  };
}
