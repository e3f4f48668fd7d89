import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Pool } from '../db/pool.js';
import { countSettlementsByChargeType } from '../ledger/index.js';
import { queueDepth } from '../queue/index.js';
import { statementCount } from '../db/statement-count.js';

export interface Metrics {
  registry: Registry;
  webhooks: Counter<'outcome' | 'provider'>;
  settleSeconds: Histogram<'outcome' | 'provider'>;
}

/**
 * The provider label of a delivery refused before any configured provider was found
 * (an unknown name in the path): labelling it with the path's text would let anyone
 * make new series. Provider names start with a letter or digit, so none is this.
 */
export const UNKNOWN_PROVIDER = '_unknown';

/**
 * Counters and the latency histogram are this process's; queue depth, dead letters,
 * oldest pending age and settlements by charge type are read from the database at
 * scrape time, so they are right however many workers run. Labels are bounded sets
 * (outcomes, charge types, configured providers), never a job or a tenant.
 * docs/operations/metrics.md lists every name.
 */
export function createMetrics(poolOrCurrent: Pool | (() => Pool)): Metrics {
  // A standalone worker's pool is replaced when it follows the database elsewhere.
  const current = typeof poolOrCurrent === 'function' ? poolOrCurrent : () => poolOrCurrent;
  const registry = new Registry();
  // No prefix: prom-client's process_* and nodejs_* names are the standard ones that
  // every Prometheus client exports and ready-made dashboards query.
  collectDefaultMetrics({ register: registry });
  const webhooks = new Counter({
    name: 'tally_webhooks_total',
    help: 'Webhook deliveries received by this process, by outcome (accepted, already_accepted, or the error code) and provider',
    labelNames: ['outcome', 'provider'] as const,
    registers: [registry],
  });
  const settleSeconds = new Histogram({
    name: 'tally_settle_duration_seconds',
    help: 'Seconds this process took to settle a claimed event, usage fetch included (each event of a batch observes the batch), by outcome and provider',
    labelNames: ['outcome', 'provider'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  new Counter({
    name: 'tally_db_statements_total',
    help: 'Statements this process sent to PostgreSQL (round trips; BEGIN and COMMIT included), counted at the driver',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(statementCount.statements);
    },
  });
  new Counter({
    name: 'tally_db_commits_total',
    help: 'Transactions this process committed (explicit COMMITs), counted at the driver',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(statementCount.commits);
    },
  });
  new Gauge({
    name: 'tally_settlements',
    help: 'Settlements committed, by charge type',
    labelNames: ['charge_type'] as const,
    registers: [registry],
    async collect() {
      const counts = await countSettlementsByChargeType(current());
      this.reset();
      for (const type of ['capture', 'release', 'adjustment'] as const) this.set({ charge_type: type }, counts.get(type) ?? 0);
    },
  });
  new Gauge({
    name: 'tally_queue_depth',
    help: 'Accepted events not yet settled (pending or being processed)',
    registers: [registry],
    async collect() {
      this.set((await queueDepth(current())).depth);
    },
  });
  new Gauge({
    name: 'tally_oldest_pending_event_age_seconds',
    help: 'Age of the oldest accepted event not yet settled; 0 when none',
    registers: [registry],
    async collect() {
      this.set((await queueDepth(current())).oldestSeconds ?? 0);
    },
  });
  new Gauge({
    name: 'tally_dead_letters',
    help: 'Events dead-lettered and waiting for an operator (POST /v1/events/{provider}/{key}/retry)',
    registers: [registry],
    async collect() {
      this.set((await queueDepth(current())).dead);
    },
  });
  return { registry, webhooks, settleSeconds };
}
