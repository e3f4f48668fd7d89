import type { Database } from '../db/connect.js';
import type { Config } from '../config/index.js';
import { loadServerSecret } from '../api/server-secret.js';
import { PaymentsWorker } from '../worker/payments-worker.js';
import type { WorkerOptions } from '../worker/worker.js';
import { throttleConnectionFailures } from './connection-trouble.js';

/**
 * Starts the payment queues' loops (Stripe events in, calls to Stripe out) of `tally
 * serve` (beside its in-process worker) and `tally worker`, on the command's database,
 * following `db.pool`. The server's secret unseals the Stripe API key: every command in
 * front of one database must share it (TALLY_SECRET_KEY, or the data folder's file).
 */
export async function startPayments(db: Database, config: Config, log: WorkerOptions['log']): Promise<PaymentsWorker> {
  const worker = new PaymentsWorker(() => db.pool, {
    serverSecret: await loadServerSecret(config),
    leaseSeconds: config.leaseSeconds,
    pollIntervalMs: config.pollIntervalMs,
    log: throttleConnectionFailures(log),
  });
  worker.start();
  return worker;
}
