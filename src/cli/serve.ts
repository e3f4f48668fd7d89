import { randomBytes } from 'node:crypto';
import { openDatabase } from '../db/connect.js';
import { migrate } from '../db/migrate.js';
import { buildApp } from '../api/app.js';
import { createMetrics } from '../api/metrics.js';
import { startWorker, workerPoolOptions } from './worker-runtime.js';
import type { Worker } from '../worker/worker.js';

export interface ServeOptions {
  port?: number;
  workers: number;
}

export async function serveCommand(options: ServeOptions): Promise<void> {
  const db = await openDatabase({ ...workerPoolOptions(20 + options.workers), applicationName: 'tally-serve' });
  await migrate(db.pool);
  const metrics = createMetrics(db.pool);
  const app = await buildApp({ pool: db.pool, metrics });
  const port = options.port ?? Number(process.env.PORT ?? 8080);
  if (!process.env.TALLY_ADMIN_TOKEN && db.embedded) {
    process.env.TALLY_ADMIN_TOKEN = randomBytes(24).toString('base64url');
    console.log(`TALLY_ADMIN_TOKEN=${process.env.TALLY_ADMIN_TOKEN} (generated for this run; set it to choose your own)`);
  }
  if (!process.env.TALLY_ADMIN_TOKEN) app.log.warn('TALLY_ADMIN_TOKEN is not set: admin calls answer 401');
  let stopping = false;
  // app.close() waits for every connection to end. Fastify closes the idle ones, but a
  // request in flight would leave its keep-alive connection open for the client's
  // next request, and the stop would hang until the keep-alive timeout: once stopping,
  // each answer closes its connection.
  app.addHook('onSend', async (_request, reply) => {
    if (stopping) reply.header('connection', 'close');
  });
  await app.listen({ port, host: process.env.HOST ?? '0.0.0.0' });
  const worker: Worker | null = options.workers > 0 ? await startWorker(db, options.workers, app.log, metrics) : null;

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    app.log.info('stopping: no new requests or claims; finishing what is in hand');
    await app.close();
    await worker?.stop();
    await db.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
