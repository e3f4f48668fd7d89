import type { Database } from '../db/connect.js';
import { raiseEachAlert } from '../alerts/index.js';
import { destinationPolicy } from '../outbound/destinations.js';
import { outboundSettings } from '../outbound/settings.js';
import type { Config } from '../config/index.js';
import { DeliveryWorker } from '../outbound/worker.js';
import type { WorkerOptions } from '../worker/worker.js';
import { throttleConnectionFailures } from './connection-trouble.js';

/**
 * Starts the outbound webhook delivery loops of `tally serve` (beside its in-process
 * settlement worker) and `tally worker`, on the command's database: they follow `db.pool`
 * when the worker moves to a new pool, and log a lost database as one line at most every
 * 10 s. The destination lists are parsed here, so a malformed one stops the command at start.
 */
export function startDeliveries(db: Database, config: Config, log: WorkerOptions['log']): DeliveryWorker {
  const worker = new DeliveryWorker(() => db.pool, {
    settings: outboundSettings(config),
    policy: destinationPolicy({ TALLY_OUTBOUND_ALLOW: config.outboundAllow, TALLY_OUTBOUND_DENY: config.outboundDeny }),
    log: throttleConnectionFailures(log),
    // The ledger's alerts module owns the table; outbound/ cannot import it (ledger/ imports outbound/).
    raiseAlert: (tx, alert) => raiseEachAlert(tx, [{ ...alert, jobId: null }]),
  });
  worker.start();
  return worker;
}
