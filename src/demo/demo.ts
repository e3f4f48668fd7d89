import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { buildApp } from '../api/app.js';
import { startEmbedded } from '../dev-db/server.js';
import { createPool, type Pool } from '../db/pool.js';
import { migrate } from '../db/migrate.js';
import { formatAmount, parseAmount } from '../money/index.js';
import { billable, type PriceBook, type Usage } from '../pricing/index.js';
import { reconcile, type ReconciliationRun } from '../reconcile/run.js';
import { planJobs, simulate, type PlannedJob, type SimulationReport } from '../simulator/index.js';
import { sleep } from '../backoff.js';
import { dutyIntervals, runDueDuties } from '../duties/duties.js';
import { unsettledSql } from '../queue/index.js';
import { Worker } from '../worker/worker.js';
import { settleSettings } from '../worker/settle-event.js';
import { intakeLimits } from '../intake/delivery-writer.js';
import { repairSettings } from '../reconcile/repair.js';
import type { Config } from '../config/index.js';
import { progressBar } from './progress.js';
import { runLongJobsDemo } from './long-jobs-demo.js';
import { runPaymentsDemo } from './payments-demo.js';
import { DemoLog } from './refusal-log.js';

export interface DemoOptions {
  jobs: number;
  seed: number;
  concurrency: number;
  /** keep the server running after the report, on this port, until Ctrl-C (to look at the data in the console) */
  serve?: { port: number };
  /** the command's configuration: the settle, intake and duty settings of the demo's server and workers */
  config: Config;
}

const MODEL = 'sim/llm-large';
const UNIT_PRICES = { input_tokens: '3.00', output_tokens: '15.00' };
const LIMITS: Usage = { input_tokens: 20_000, output_tokens: 4_000 };
const TENANTS = 5;
const CREDIT = '1000.00';

/**
 * `tally demo`: an embedded PostgreSQL, the API and two workers in this process, and a
 * chaotic simulated provider. Prints what was billed, what a naive handler would have
 * billed, and whether reconciliation is clean. Exit 0 only if billing is exact.
 */
export async function runDemo(options: DemoOptions): Promise<boolean> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tally-demo-'));
  console.log(`Tally demo — ${options.jobs} jobs, seed ${options.seed}`);
  console.log('starting an embedded PostgreSQL in a temporary folder…');
  const server = await startEmbedded({ dataDir, persistent: false });
  const pool = createPool(server.url, { max: 30 });
  const log = pino({ level: 'warn' });
  const workers: Worker[] = [];
  let app: Awaited<ReturnType<typeof buildApp>> | null = null;
  try {
    await migrate(pool);
    // The demo's own admin token: its server and its data live only as long as it runs.
    const adminToken = randomBytes(24).toString('base64url');
    const serverSecret = randomBytes(32);
    // The refusals the simulator provokes are counted for the report, not logged one by one.
    const serverLog = new DemoLog();
    const { config } = options;
    app = await buildApp({
      pool,
      logLevel: 'warn',
      logStream: serverLog,
      serverSecret,
      settings: { adminToken, intake: intakeLimits(config), repairs: repairSettings(config) },
    });
    await app.listen({ port: options.serve?.port ?? 0, host: '127.0.0.1' });
    const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    for (let i = 0; i < 2; i++) {
      const worker = new Worker(pool, {
        concurrency: 4,
        leaseSeconds: 30,
        pollIntervalMs: 200,
        batchSize: config.settleBatchSize,
        settle: settleSettings(config),
        dutyIntervalMs: 1000,
        duties: (db, dutyLog) => runDueDuties(db, dutyLog, dutyIntervals(config)),
        databaseUrl: server.url,
        log,
      });
      await worker.start();
      workers.push(worker);
    }
    const world = await setUp(baseUrl, adminToken, options);
    let deliveriesBar: ReturnType<typeof progressBar> | undefined;
    const report = await simulate(world.jobs, {
      baseUrl,
      provider: world.provider,
      secret: world.secret,
      seed: options.seed,
      concurrency: options.concurrency,
      cancelJob: async (jobId) => {
        const key = world.keyOfJob.get(jobId)!;
        await fetch(`${baseUrl}/v1/jobs/${jobId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
      },
      onStart: (total) => (deliveriesBar = progressBar('webhook deliveries', total)),
      onDelivery: () => deliveriesBar?.increment(),
    });
    deliveriesBar?.stop();
    await waitForSettlement(pool, options.jobs);
    const run = await reconcile(pool);
    const billed = await printReport(pool, world, report, run, serverLog.summary());
    const long = await runLongJobsDemo({ baseUrl, adminToken, provider: world.provider, secret: world.secret });
    const paid = await runPaymentsDemo({ pool, baseUrl, adminToken, serverSecret, provider: world.provider, model: MODEL });
    const exact = billed && long && paid;
    if (options.serve) await serveUntilStopped(baseUrl, adminToken);
    return exact;
  } finally {
    for (const worker of workers) await worker.stop();
    await app?.close();
    await pool.end();
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** `--serve`: the demo's server stays up with its data until Ctrl-C or SIGTERM. */
async function serveUntilStopped(baseUrl: string, adminToken: string): Promise<void> {
  console.log('');
  console.log(`The demo's server keeps running with its data: open the console at ${baseUrl}/console`);
  console.log(`and sign in with the admin token: ${adminToken}`);
  console.log(`(the API is at ${baseUrl}/v1, its description at ${baseUrl}/openapi.json). Ctrl-C stops it and deletes the data.`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
}

interface DemoWorld {
  provider: string;
  secret: string;
  jobs: PlannedJob[];
  keyOfJob: Map<string, string>;
  book: PriceBook;
}

async function setUp(baseUrl: string, adminToken: string, options: DemoOptions): Promise<DemoWorld> {
  const admin = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  const call = async (method: string, path: string, body: unknown, headers: Record<string, string> = admin) => {
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body: JSON.stringify(body) });
    const json = (await response.json()) as any;
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const provider = 'simulated-provider';
  // A long cancel grace: a cancelled job's completion always arrives within it.
  await call('POST', '/v1/providers', { name: provider, kind: 'generic', secrets: [secret], policies: { cancel_grace_seconds: 600 } });
  const price = await call('PUT', `/v1/prices/${encodeURIComponent(MODEL)}`, { currency: 'USD', unit_prices: UNIT_PRICES });
  const tenants: { id: string; key: string; wallet: string }[] = [];
  for (let i = 0; i < TENANTS; i++) {
    const tenant = await call('POST', '/v1/tenants', { name: `demo-tenant-${i + 1}` });
    const headers = { authorization: `Bearer ${tenant.api_key}`, 'content-type': 'application/json' };
    const wallet = await call('POST', '/v1/wallets', { currency: 'USD' }, headers);
    await call('POST', `/v1/wallets/${wallet.id}/credits`, { amount: CREDIT, reference: 'demo top-up' }, { ...admin, 'idempotency-key': `demo-credit-${i}` });
    tenants.push({ id: tenant.id, key: tenant.api_key, wallet: wallet.id });
  }
  const bar = progressBar('jobs submitted', options.jobs);
  const created: { id: string; tenantId: string; model: string; currency: string }[] = [];
  const keyOfJob = new Map<string, string>();
  for (let i = 0; i < options.jobs; i++) {
    const tenant = tenants[i % TENANTS]!;
    const headers = { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() };
    const job = await call('POST', '/v1/jobs', { wallet_id: tenant.wallet, model: MODEL, provider, limits: LIMITS }, headers);
    created.push({ id: job.id, tenantId: tenant.id, model: MODEL, currency: 'USD' });
    keyOfJob.set(job.id, tenant.key);
    bar.increment();
  }
  bar.stop();
  const book: PriceBook = {
    id: price.id,
    model: MODEL,
    currency: 'USD',
    version: price.version,
    unitPrices: Object.fromEntries(Object.entries(UNIT_PRICES).map(([d, p]) => [d, parseAmount(p)])),
  };
  return { provider, secret, jobs: planJobs(created, LIMITS, options.seed), keyOfJob, book };
}

/** Every job terminal and every accepted event settled. */
async function waitForSettlement(pool: Pool, total: number): Promise<void> {
  const bar = progressBar('jobs settled', total);
  for (;;) {
    const { rows } = await pool.query<{ terminal: number; open_events: number }>(
      `select (select count(*)::int from jobs where state in ('captured', 'released')) as terminal,
              (select count(*)::int from webhook_events where ${unsettledSql()}) as open_events`,
    );
    bar.update(rows[0]!.terminal);
    if (rows[0]!.terminal === total && rows[0]!.open_events === 0) break;
    // Settling happens in the workers; there is nothing to await but the database's state.
    await sleep(200);
  }
  bar.stop();
}

async function printReport(pool: Pool, world: DemoWorld, report: SimulationReport, run: ReconciliationRun, provoked: string | null): Promise<boolean> {
  const charged = await pool.query<{ id: string; state: string; total: bigint; settlements: number }>(
    `select j.id, j.state, coalesce(j.captured, 0) + j.adjusted as total,
            (select count(*)::int from settlements s where s.job_id = j.id and s.charge_type in ('capture', 'release')) as settlements
     from jobs j`,
  );
  const byId = new Map(charged.rows.map((r) => [r.id, r]));
  let expectedTotal = 0n;
  let billedTotal = 0n;
  const wrong: string[] = [];
  for (const job of world.jobs) {
    const row = byId.get(job.id)!;
    const expected = job.scenario.billedUsage ? billable(world.book, job.scenario.billedUsage, reservationOf(world.book)).amount : 0n;
    const expectedState = job.scenario.billedUsage ? 'captured' : 'released';
    expectedTotal += expected;
    billedTotal += row.total;
    if (row.total !== expected || row.state !== expectedState || row.settlements !== 1) {
      wrong.push(`${job.id} (${job.scenario.kind}): billed ${formatAmount(row.total)} as ${row.state}, expected ${formatAmount(expected)} as ${expectedState}`);
    }
  }
  const naive = naiveBilling(world, report);
  const exact = wrong.length === 0 && report.unexpected.length === 0;
  const line = (label: string, value: string | number) => console.log(`  ${label.padEnd(44)} ${value}`);
  console.log('\nReport');
  line('jobs', world.jobs.length);
  line('webhook deliveries sent', report.deliveries);
  line('  accepted (distinct events)', report.accepted);
  line('  duplicates absorbed (already_accepted)', report.duplicatesAbsorbed);
  line('  forgeries refused (401)', report.forgeriesRefused);
  line('  unexpected answers', report.unexpected.length);
  line('billed total (USD)', formatAmount(billedTotal));
  line('expected total (USD)', formatAmount(expectedTotal));
  line('naive check-then-insert handler would bill', `${formatAmount(naive.total)} (${naive.overbilledJobs} jobs overbilled)`);
  line('reconciliation', run.clean ? 'clean' : `${run.exceptions.length} exception(s): ${[...new Set(run.exceptions.map((e) => e.class))].join(', ')}`);
  if (provoked) console.log(`  ${provoked} (counted here, not logged one by one)`);
  for (const problem of wrong.slice(0, 10)) console.log(`  WRONG: ${problem}`);
  for (const r of report.unexpected.slice(0, 10)) console.log(`  UNEXPECTED: ${r.status} ${r.answer} for ${r.delivery.eventId}`);
  const ok = exact && run.clean;
  console.log(ok ? '\nBilling is exact: every job charged once, at its pinned price.' : '\nBilling is NOT exact.');
  return ok;
}

function reservationOf(book: PriceBook): bigint {
  return billable(book, LIMITS, 10n ** 18n).amount;
}

/**
 * What a handler that dedups on the webhook id with a check-then-insert (and no
 * settlement key) would charge: every distinct event id of a completion, correction
 * or cancel-with-usage charged in full.
 */
function naiveBilling(world: DemoWorld, report: SimulationReport): { total: bigint; overbilledJobs: number } {
  const seen = new Set<string>();
  const perJob = new Map<string, bigint>();
  for (const result of report.results) {
    const { delivery } = result;
    if (delivery.forged || seen.has(delivery.eventId)) continue;
    seen.add(delivery.eventId);
    const usage = delivery.event.usage;
    // a progress report's usage is usage so far, never a charge, even to a naive handler
    if (!usage || delivery.event.type === 'job.failed' || delivery.event.type === 'job.progress') continue;
    const amount = billable(world.book, usage, reservationOf(world.book)).amount;
    perJob.set(delivery.jobId, (perJob.get(delivery.jobId) ?? 0n) + amount);
  }
  let total = 0n;
  let overbilled = 0;
  for (const job of world.jobs) {
    const naive = perJob.get(job.id) ?? 0n;
    total += naive;
    const expected = job.scenario.billedUsage ? billable(world.book, job.scenario.billedUsage, reservationOf(world.book)).amount : 0n;
    if (naive > expected) overbilled++;
  }
  return { total, overbilledJobs: overbilled };
}
