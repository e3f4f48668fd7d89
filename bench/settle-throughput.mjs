#!/usr/bin/env node
/**
 * Throughput of ledger.settle(): how many job completions per second one process
 * settles against one PostgreSQL, each in its own short transaction (lock the job,
 * decide, insert the settlement and its two entries, move three projections, resolve
 * the hold, update the job).
 *
 *   npm run build && node bench/settle-throughput.mjs [--jobs 4000] [--concurrency 16] [--wallets 16] [--tenants 4]
 *
 * With DATABASE_URL it creates (and drops afterwards) a scratch database on that
 * server; without, it starts an embedded PostgreSQL in a temporary folder. Plain ESM
 * over dist/, so it needs no TypeScript loader. Jobs are spread over `wallets`
 * wallets of `tenants` tenants: settlements of one wallet (and of one tenant's
 * revenue account) queue on the same rows, as they would in production.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { createPool } from '../dist/db/pool.js';
import { migrate } from '../dist/db/migrate.js';
import { startEmbedded } from '../dist/dev-db/server.js';
import { withTransaction } from '../dist/db/transaction.js';
import { newId } from '../dist/ids.js';
import { insertWallet } from '../dist/ledger/accounts.js';
import { creditWallet } from '../dist/ledger/credit.js';
import { settle } from '../dist/ledger/settle.js';
import { publishPriceVersion } from '../dist/catalog/prices.js';
import { submitJob } from '../dist/jobs/submit.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '4000' },
    concurrency: { type: 'string', default: '16' },
    wallets: { type: 'string', default: '16' },
    tenants: { type: 'string', default: '4' },
  },
});
const JOBS = Number(values.jobs);
const CONCURRENCY = Number(values.concurrency);
const WALLETS = Number(values.wallets);
const TENANTS = Math.min(Number(values.tenants), WALLETS);
const LIMITS = { input_tokens: 1000, output_tokens: 1000 };

const log = (message) => process.stderr.write(`${message}\n`);

async function openServer() {
  if (process.env.DATABASE_URL) {
    const name = `tally_bench_${randomBytes(5).toString('hex')}`;
    const admin = new URL(process.env.DATABASE_URL);
    admin.pathname = '/postgres';
    const adminPool = createPool(admin.toString(), { max: 1 });
    await adminPool.query(`create database ${name}`);
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = `/${name}`;
    return {
      url: url.toString(),
      where: `DATABASE_URL (scratch database ${name})`,
      close: async () => {
        await adminPool.query(`drop database if exists ${name} with (force)`);
        await adminPool.end();
      },
    };
  }
  const dir = await mkdtemp(join(tmpdir(), 'tally-bench-'));
  log(`starting an embedded PostgreSQL in ${dir} ...`);
  const server = await startEmbedded({ dataDir: dir, persistent: false, log });
  return {
    url: server.url,
    where: `embedded PostgreSQL in ${dir}`,
    close: async () => {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `count` tasks with at most `width` in flight; reports progress every second. */
async function runAll(count, width, task, label) {
  let next = 0;
  let done = 0;
  const started = performance.now();
  const timer = setInterval(() => {
    const seconds = (performance.now() - started) / 1000;
    log(`  ${label}: ${done}/${count} (${Math.round(done / seconds)}/s)`);
  }, 1000);
  try {
    await Promise.all(
      Array.from({ length: width }, async () => {
        while (next < count) {
          const i = next++;
          await task(i);
          done++;
        }
      }),
    );
  } finally {
    clearInterval(timer);
  }
  return (performance.now() - started) / 1000;
}

const server = await openServer();
const pool = createPool(server.url, { max: CONCURRENCY + 2, applicationName: 'tally-bench' });
try {
  log(`database: ${server.where}`);
  await migrate(pool);

  // Tenants, wallets (funded for every job they will reserve), a provider, a price.
  const provider = `bench-${randomBytes(3).toString('hex')}`;
  await pool.query(`insert into providers (name, kind, secrets) values ($1, 'generic', $2)`, [provider, ['whsec_bench']]);
  const model = 'bench-model';
  await withTransaction(pool, (tx) => publishPriceVersion(tx, model, 'USD', { input_tokens: 2_000_000n, output_tokens: 6_000_000n }));
  const tenants = [];
  for (let t = 0; t < TENANTS; t++) {
    const id = newId();
    await pool.query('insert into tenants (id, name) values ($1, $2)', [id, `bench ${t}`]);
    tenants.push(id);
  }
  const wallets = [];
  const perWallet = Math.ceil(JOBS / WALLETS);
  for (let w = 0; w < WALLETS; w++) {
    const tenantId = tenants[w % TENANTS];
    // one wallet per tenant and currency: extra wallets of a tenant use other currencies
    const currency = `U${String.fromCharCode(65 + Math.floor(w / TENANTS) % 26)}${String.fromCharCode(65 + Math.floor(w / TENANTS / 26) % 26)}`;
    if (currency !== 'USD') await withTransaction(pool, (tx) => publishPriceVersion(tx, model, currency, { input_tokens: 2_000_000n, output_tokens: 6_000_000n }));
    const wallet = await withTransaction(pool, (tx) => insertWallet(tx, tenantId, currency));
    await withTransaction(pool, (tx) => creditWallet(tx, { wallet, amount: BigInt(perWallet) * 8_000n, creditKey: `bench-${w}` }));
    wallets.push(wallet);
  }

  log(`submitting ${JOBS} jobs over ${WALLETS} wallets of ${TENANTS} tenants ...`);
  const jobs = new Array(JOBS);
  await runAll(
    JOBS,
    CONCURRENCY,
    async (i) => {
      const wallet = wallets[i % WALLETS];
      jobs[i] = await withTransaction(pool, (tx) =>
        submitJob(tx, { tenantId: wallet.tenant_id, wallet, provider: { name: provider, policies: {} }, model, limits: LIMITS }),
      );
    },
    'submitted',
  );

  log(`settling ${JOBS} completions with ${CONCURRENCY} concurrent callers ...`);
  const latencies = [];
  const seconds = await runAll(
    JOBS,
    CONCURRENCY,
    async (i) => {
      const t0 = performance.now();
      const result = await settle(pool, { jobId: jobs[i].id, event: { type: 'job.completed', usage: { input_tokens: 100 + (i % 900), output_tokens: 50 } } });
      latencies.push(performance.now() - t0);
      if (result.outcome !== 'applied' || result.replayed) throw new Error(`job ${jobs[i].id}: unexpected ${result.outcome}`);
    },
    'settled',
  );

  const check = await pool.query(`select count(*)::int as n from settlements where charge_type = 'capture'`);
  if (check.rows[0].n !== JOBS) throw new Error(`expected ${JOBS} captures, found ${check.rows[0].n}`);
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(1);
  const rate = JOBS / seconds;
  console.log(
    JSON.stringify({
      settlements: JOBS,
      concurrency: CONCURRENCY,
      wallets: WALLETS,
      tenants: TENANTS,
      seconds: Number(seconds.toFixed(2)),
      settlements_per_second: Math.round(rate),
      latency_ms: { p50: Number(pct(50)), p95: Number(pct(95)), p99: Number(pct(99)) },
    }),
  );
  log(`${Math.round(rate)} settlements/second (${JOBS} in ${seconds.toFixed(2)} s; p50 ${pct(50)} ms, p99 ${pct(99)} ms)`);
} finally {
  await pool.end();
  await server.close();
}
