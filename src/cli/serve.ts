import { dataDir, openDatabase } from '../db/connect.js';
import { migrate } from '../db/migrate.js';
import { buildApp } from '../api/app.js';
import { createMetrics } from '../api/metrics.js';
import { ProviderCache } from '../catalog/provider-cache.js';
import { startWorker, workerPoolOptions } from './worker-runtime.js';
import { startDeliveries } from './outbound-runtime.js';
import { startPayments } from './payments-runtime.js';
import type { Worker } from '../worker/worker.js';
import { keptAdminToken } from './admin-token.js';
import { readyLines } from './serve-banner.js';
import { processConfig } from '../config/index.js';
import { loadServerSecret } from '../api/server-secret.js';
import { destinationPolicy } from '../outbound/destinations.js';
import { intakeLimits } from '../intake/delivery-writer.js';
import { repairSettings } from '../reconcile/repair.js';
import { sealSecretsAtStart } from './seal-at-start.js';
import { PortBusy, ensurePortFree, isAddressInUse } from './port-check.js';
import { countTenantsAndWallets } from '../catalog/tenant-list.js';

export interface ServeOptions {
  port?: number;
  workers: number;
}

export async function serveCommand(options: ServeOptions): Promise<void> {
  const config = processConfig();
  const port = options.port ?? config.port;
  const host = config.host;
  const chooseAnother = 'pass --port N (or set PORT) to use another';
  await ensurePortFree(host, port, chooseAnother);
  const db = await openDatabase(config, {
    ...workerPoolOptions(20 + options.workers, config.leaseSeconds),
    applicationName: 'tally-serve',
  });
  await migrate(db.pool);
  const metrics = createMetrics(db.pool);
  let adminToken = config.adminToken ?? null;
  let keptTokenLine: string | null = null;
  if (!adminToken && db.embedded) {
    const kept = await keptAdminToken(dataDir(config));
    adminToken = kept.token;
    // Black-box tests read the token from this line: keep its `TALLY_ADMIN_TOKEN=<token>` form.
    keptTokenLine = `TALLY_ADMIN_TOKEN=${kept.token} (${kept.created ? 'made and ' : ''}kept in ${kept.path}, which ./bin/tally commands read; set TALLY_ADMIN_TOKEN to choose your own)`;
  }
  const serverSecret = await loadServerSecret(config);
  const providers = new ProviderCache(db.pool, db.url, serverSecret);
  await providers.start();
  const app = await buildApp({
    pool: db.pool,
    metrics,
    providers,
    logLevel: config.logLevel,
    checkResponses: config.checkResponses,
    serverSecret,
    settings: {
      adminToken,
      metricsToken: config.metricsToken ?? null,
      destinations: destinationPolicy({ TALLY_OUTBOUND_ALLOW: config.outboundAllow, TALLY_OUTBOUND_DENY: config.outboundDeny }),
      intake: intakeLimits(config),
      repairs: repairSettings(config),
    },
  });
  if (!adminToken) app.log.warn('TALLY_ADMIN_TOKEN is not set: admin calls answer 401');
  await sealSecretsAtStart(db.pool, serverSecret, app.log);
  let stopping = false;
  // app.close() waits for every connection to end. Fastify closes the idle ones, but a
  // request in flight would leave its keep-alive connection open for the client's
  // next request, and the stop would hang until the keep-alive timeout: once stopping,
  // each answer closes its connection.
  app.addHook('onSend', async (_request, reply) => {
    if (stopping) reply.header('connection', 'close');
  });
  // Taken since the check above (by a program starting at the same moment): said the same way.
  await app.listen({ port, host }).catch((error: unknown) => {
    throw isAddressInUse(error) ? new PortBusy(host, port, chooseAnother) : error;
  });
  const worker: Worker | null = options.workers > 0 ? await startWorker(db, config, options.workers, app.log, metrics) : null;
  // Outbound webhooks go with the in-process worker: --workers 0 leaves them to `tally worker`.
  const deliveries = options.workers > 0 ? startDeliveries(db, config, app.log) : null;
  const payments = options.workers > 0 ? await startPayments(db, config, app.log) : null;
  if (keptTokenLine) console.log(keptTokenLine);
  const address = app.server.address();
  const counts = await countTenantsAndWallets(db.pool);
  for (const line of readyLines(host, typeof address === 'object' && address ? address.port : port, counts)) console.log(line);

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    app.log.info('stopping: no new requests or claims; finishing what is in hand');
    await app.close();
    await worker?.stop();
    await deliveries?.stop();
    await payments?.stop();
    await providers.stop();
    await db.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
