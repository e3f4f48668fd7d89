import type { Database } from '../db/connect.js';
import type { Metrics } from '../api/metrics.js';
import { integerSetting } from '../settings.js';
import { DEFAULT_LEASE_SECONDS, Worker, type WorkerOptions } from '../worker/worker.js';

/** Starts a settlement worker over the command's database, wired to logs and metrics. */
export async function startWorker(db: Database, concurrency: number, log: WorkerOptions['log'], metrics?: Metrics): Promise<Worker> {
  const worker = new Worker(db.pool, {
    concurrency,
    leaseSeconds: DEFAULT_LEASE_SECONDS,
    pollIntervalMs: integerSetting('TALLY_POLL_INTERVAL_MS', 1000),
    dutyIntervalMs: 1000,
    databaseUrl: db.url,
    log,
    onOutcome: (outcome, seconds) => {
      const label = outcome.kind === 'settled' ? outcome.result.outcome : outcome.kind;
      metrics?.settleSeconds.observe({ outcome: label }, seconds);
    },
  });
  await worker.start();
  return worker;
}

/** Pool settings for processes that settle: a stalled transaction must not outlive its lease. */
export function workerPoolOptions(max: number) {
  const leaseMs = DEFAULT_LEASE_SECONDS * 1000;
  return {
    max,
    statementTimeout: Math.min(30_000, Math.floor(leaseMs / 3)),
    idleInTransactionTimeout: Math.min(30_000, Math.floor(leaseMs / 3)),
  };
}
