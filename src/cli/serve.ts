import { dataDir, openDatabase } from '../db/connect.js';
import { migrate } from '../db/migrate.js';
import { buildApp } from '../api/app.js';
import { createMetrics } from '../api/metrics.js';
import { startWorker, workerPoolOptions } from './worker-runtime.js';
import { startDeliveries } from './outbound-runtime.js';
import type { Worker } from '../worker/worker.js';
import { keptAdminToken } from './admin-token.js';
import { defaultHost, readyLines } from './serve-banner.js';

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
  let keptTokenLine: string | null = null;
  if (!process.env.TALLY_ADMIN_TOKEN && db.embedded) {
    const kept = await keptAdminToken(dataDir());
    process.env.TALLY_ADMIN_TOKEN = kept.token;
    // Black-box tests read the token from this line: keep its `TALLY_ADMIN_TOKEN=<token>` form.
    keptTokenLine = `TALLY_ADMIN_TOKEN=${kept.token} (${kept.created ? 'made and ' : ''}kept in ${kept.path}, which ./bin/tally commands read; set TALLY_ADMIN_TOKEN to choose your own)`;
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
  const host = process.env.HOST || defaultHost(db.embedded !== null);
  await app.listen({ port, host });
  const worker: Worker | null = options.workers > 0 ? await startWorker(db, options.workers, app.log, metrics) : null;
  // Outbound webhooks go with the in-process worker: --workers 0 leaves them to `tally worker`.
  const deliveries = options.workers > 0 ? startDeliveries(db, app.log) : null;
  if (keptTokenLine) console.log(keptTokenLine);
  const address = app.server.address();
  for (const line of readyLines(host, typeof address === 'object' && address ? address.port : port)) console.log(line);

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    app.log.info('stopping: no new requests or claims; finishing what is in hand');
    await app.close();
    await worker?.stop();
    await deliveries?.stop();
    await db.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
