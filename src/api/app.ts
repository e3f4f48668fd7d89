import Fastify, { type FastifyInstance } from 'fastify';
import type { Pool } from '../db/pool.js';
import { registerHealth } from './health.js';

export interface AppOptions {
  pool: Pool;
  logLevel?: string;
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: options.logLevel ?? process.env.LOG_LEVEL ?? 'info' },
    bodyLimit: 1024 * 1024,
  });
  registerHealth(app, options.pool);
  return app;
}
