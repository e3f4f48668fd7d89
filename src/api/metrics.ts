import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Pool } from '../db/pool.js';
import { awaitingSql, unsettledSql } from '../queue/index.js';

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
export function createMetrics(pool: Pool): Metrics {
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
  new Gauge({
    name: 'tally_settlements',
    help: 'Settlements committed, by charge type',
    labelNames: ['charge_type'] as const,
    registers: [registry],
    async collect() {
      const rows = await pool.query<{ charge_type: string; n: string }>(
        'select charge_type, count(*)::text as n from settlements group by charge_type',
      );
      this.reset();
      for (const type of ['capture', 'release', 'adjustment']) {
        this.set({ charge_type: type }, Number(rows.rows.find((r) => r.charge_type === type)?.n ?? 0));
      }
    },
  });
  const queue = async () =>
    (
      await pool.query<{ depth: string; dead: string; oldest: number | null }>(
        `select count(*) filter (where ${unsettledSql()})::text as depth,
                count(*) filter (where state = 'dead')::text as dead,
                extract(epoch from now() - min(received_at) filter (where ${unsettledSql()}))::float8 as oldest
         from webhook_events where ${awaitingSql()}`,
      )
    ).rows[0]!;
  new Gauge({
    name: 'tally_queue_depth',
    help: 'Accepted events not yet settled (pending or being processed)',
    registers: [registry],
    async collect() {
      this.set(Number((await queue()).depth));
    },
  });
  new Gauge({
    name: 'tally_oldest_pending_event_age_seconds',
    help: 'Age of the oldest accepted event not yet settled; 0 when none',
    registers: [registry],
    async collect() {
      this.set((await queue()).oldest ?? 0);
    },
  });
  new Gauge({
    name: 'tally_dead_letters',
    help: 'Events dead-lettered and waiting for an operator (POST /v1/events/{provider}/{key}/retry)',
    registers: [registry],
    async collect() {
      this.set(Number((await queue()).dead));
    },
  });
  return { registry, webhooks, settleSeconds };
}
