import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Pool } from '../db/pool.js';
import { migrationsCurrent } from '../db/migrate.js';

export function registerHealth(app: FastifyInstance, pool: Pool): void {
  app.get(
    '/healthz',
    {
      schema: {
        summary: '200 once the database answers and its migrations are applied; 503 otherwise (for load balancers)',
        tags: ['operations'],
        response: { 200: Type.Object({ status: Type.Literal('ok') }), 503: Type.Ref('Error') },
      },
    },
    async (_request, reply) => {
      try {
        if (!(await migrationsCurrent(pool))) {
          return reply
            .code(503)
            .send({ error: { code: 'migrations_pending', message: 'database migrations are not applied; run tally migrate' } });
        }
        return { status: 'ok' };
      } catch {
        return reply.code(503).send({ error: { code: 'database_unavailable', message: 'the database does not answer' } });
      }
    },
  );
}
