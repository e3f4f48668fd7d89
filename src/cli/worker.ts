import { pino } from 'pino';
import { openDatabase } from '../db/connect.js';
import { migrate } from '../db/migrate.js';
import { FollowingWorker, workerPoolOptions } from './worker-runtime.js';
import { startDeliveries } from './outbound-runtime.js';
import { startPayments } from './payments-runtime.js';
import { processConfig } from '../config/index.js';
import { createMetrics } from '../api/metrics.js';
import { serveWorkerMetrics } from './worker-metrics.js';
import { loadServerSecret } from '../api/server-secret.js';
import { sealSecretsAtStart } from './seal-at-start.js';

export async function workerCommand(options: { concurrency: number; metricsPort?: number }): Promise<void> {
  // A provider's api_key is write-only: should any object holding one be logged, it is censored.
  const config = processConfig();
  const log = pino({ level: config.logLevel, name: 'tally-worker', redact: ['api_key', '*.api_key', '*.headers.authorization'] });
  const db = await openDatabase(config, { ...workerPoolOptions(options.concurrency + 2, config.leaseSeconds), applicationName: 'tally-worker' });
  await migrate(db.pool);
  await sealSecretsAtStart(db.pool, await loadServerSecret(config), log);
  // Follows the database: when it stops answering (an embedded serve restarted on a new
  // port, a restart of PostgreSQL), the worker pauses and resumes wherever it answers.
  const metrics = options.metricsPort === undefined ? undefined : createMetrics(() => db.pool);
  const worker = new FollowingWorker(db, config, options.concurrency, log, metrics);
  await worker.start();
  const deliveries = startDeliveries(db, config, log);
  const payments = await startPayments(db, config, log);
  const metricsServer = metrics ? await serveWorkerMetrics(metrics, options.metricsPort!, config.host, config.metricsToken ?? null) : null;
  log.info({ concurrency: options.concurrency, ...(metricsServer ? { metrics: `http://${config.host}:${options.metricsPort}/metrics` } : {}) }, 'worker started');
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log.info('stopping: no new claims; finishing the events in hand');
    await worker.stop();
    await deliveries.stop();
    await payments.stop();
    await new Promise((resolve) => (metricsServer ? metricsServer.close(resolve) : resolve(undefined)));
    await db.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
