import { readFileSync } from 'node:fs';
import { Type } from '@sinclair/typebox';
import type { ApiApp } from '../context.js';

/**
 * `GET /` sends a person who opens the server's URL to the operator console; `GET /v1`
 * tells a program what this is and where to go next.
 */

/** package.json's version; the same path from src/api/routes/ and dist/api/routes/. */
const VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const Home = Type.Object({
  service: Type.Literal('tally'),
  version: Type.String({ examples: ['0.1.0'] }),
  description: Type.String(),
  links: Type.Object({
    console: Type.String({ description: 'the operator console (sign in with the admin token or a tenant API key)' }),
    openapi: Type.String({ description: 'the OpenAPI 3 document of this API' }),
    health: Type.String({ description: '200 once the database answers and migrations are applied' }),
    metrics: Type.String({ description: 'Prometheus text' }),
  }),
  docs: Type.String({ description: 'where the documentation is' }),
});

export function homeRoutes(app: ApiApp): void {
  app.get('/', { schema: { summary: 'Redirects to the operator console, /console', tags: ['meta'], response: { 302: Type.Null({ description: 'Location: /console' }) } } }, async (_request, reply) =>
    reply.redirect('/console', 302),
  );
  app.get(
    '/v1',
    {
      schema: { summary: 'What this service is and where to go next', tags: ['meta'], response: { 200: Home } },
    },
    async () => ({
      service: 'tally' as const,
      version: VERSION,
      description: 'Exactly-once billing for wallet-funded asynchronous AI inference jobs',
      links: { console: '/console', openapi: '/openapi.json', health: '/healthz', metrics: '/metrics' },
      docs: "README.md (Quickstart) and docs/CONTRACT.md in Tally's source; ./bin/tally --help",
    }),
  );
}
