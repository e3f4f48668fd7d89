import type { Database } from '../db/connect.js';
import { destinationPolicy } from '../outbound/destinations.js';
import { outboundSettings } from '../outbound/settings.js';
import { DeliveryWorker } from '../outbound/worker.js';
import type { WorkerOptions } from '../worker/worker.js';
import { throttleConnectionFailures } from './connection-trouble.js';

/**
 * Starts the outbound webhook delivery loops of `tally serve` (beside its in-process
 * settlement worker) and `tally worker`, on the command's database: they follow `db.pool`
 * when the worker moves to a new pool, and log a lost database as one line at most every
 * 10 s. Settings are read here, so a malformed one stops the command at start.
 */
export function startDeliveries(db: Database, log: WorkerOptions['log']): DeliveryWorker {
  const worker = new DeliveryWorker(() => db.pool, {
    settings: outboundSettings(),
    policy: destinationPolicy(),
    log: throttleConnectionFailures(log),
  });
  worker.start();
  return worker;
}
