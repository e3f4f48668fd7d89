import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createPool, type Pool } from '../../src/db/pool.js';
import { send } from '../../src/simulator/index.js';
import {
  CREDIT,
  checkBilling,
  createChaosWorld,
  expectedCharge,
  formatMicros,
  micros,
  waitForSettled,
  type BillingCheck,
  type ChaosWorld,
} from '../support/chaos-world.js';
import { Client } from '../support/client.js';
import { listeningWorkers } from '../support/fleet.js';
import { freePort, runTally, waitUntil, type TallyProcess } from '../support/server.js';
import { CREDIT_AMOUNT, FailoverLoad } from './failover-load.js';
import { ReplicaPair, type Base, type SynchronousCommit } from './replica-pair.js';

/**
 * One failover under load, start to finish: a primary and its standby (replica-pair.ts),
 * two `tally serve` (one with an in-process worker) and a `tally worker`, all given the
 * multi-host DATABASE_URL; the load of failover-load.ts through both servers. Mid-run the
 * standby is made to fall behind (its replication stream stalled), the primary's
 * postmaster is SIGKILLed and the standby promoted with `pg_ctl promote`; the load runs
 * on until the new primary has settled a good number of events. Then everything Tally
 * acknowledged is looked for on the new primary.
 */

const WARM_UP_SETTLEMENTS = 40;
const SETTLEMENTS_AFTER_FAILOVER = 40;

export interface FailoverOutcome {
  synchronousCommit: SynchronousCommit;
  world: ChaosWorld;
  load: FailoverLoad;
  /** a pool on the new primary (the promoted standby) */
  db: Pool;
  servers: string[];
  figures: FailoverFigures;
  billing: BillingCheck;
  /** acknowledged deliveries missing on the new primary, whose job is there (a provider can redeliver them) */
  redeliverable: string[];
  /** processes that exited on their own */
  crashes: string[];
  listeners: number;
  /** the 5xx answered before the standby was stalled (none expected): what and why */
  early5xx: string[];
  stop(): Promise<void>;
}

export interface FailoverFigures {
  deliveries_acknowledged: number;
  deliveries_lost: number;
  jobs_acknowledged: number;
  jobs_lost: number;
  credits_acknowledged: number;
  credits_lost: number;
  cancels_acknowledged: number;
  applied_twice: number;
  /** in sync mode: commits waiting for the standby when the primary died (never acknowledged) */
  commits_in_flight_at_kill: number;
  errors_5xx_before_failover: number;
  errors_5xx_during_switch: number;
  seconds_kill_to_promoted: number;
  seconds_kill_to_first_settlement: number;
  /** how long the run took: pair and processes started; load until stopped */
  seconds_setup: number;
  seconds_under_load: number;
}

export async function runFailover(base: Base, label: string, synchronousCommit: SynchronousCommit, seed: number): Promise<FailoverOutcome> {
  const startedAt = Date.now();
  const pair = await ReplicaPair.start(base, label, synchronousCommit);
  const processes: { name: string; proc: TallyProcess }[] = [];
  const pools: Pool[] = [];
  const stop = async () => {
    await keepLogs(label, processes, pair);
    await Promise.all(processes.map(({ proc }) => proc.stop('SIGKILL')));
    for (const { proc } of processes) liveProcesses.delete(proc);
    await Promise.all(pools.map((p) => p.end().catch(() => {})));
    await pair.stop();
  };
  try {
    // The test watches through the same multi-host URL, so it follows the primary too.
    const observer = createPool(pair.databaseUrl, { max: 3 });
    pools.push(observer);
    const env = {
      DATABASE_URL: pair.databaseUrl,
      HOST: '127.0.0.1',
      TALLY_SECRET_KEY: randomBytes(32).toString('hex'),
      TALLY_DATA_DIR: join(base.root, label, 'tally'),
      TALLY_POLL_INTERVAL_MS: '200',
      // Events claimed when the primary died are claimed again once their lease runs out.
      TALLY_LEASE_SECONDS: '9',
      LOG_LEVEL: 'info',
    };
    const ports = [await freePort(), await freePort()];
    const spawnTally = (name: string, args: string[]) => {
      const proc = runTally(args, env);
      liveProcesses.add(proc);
      processes.push({ name, proc });
    };
    spawnTally('serve-0', ['serve', '--port', String(ports[0]), '--workers', '2']);
    spawnTally('serve-1', ['serve', '--port', String(ports[1]), '--workers', '0']);
    spawnTally('worker', ['worker', '--concurrency', '2']);
    const servers = ports.map((port) => `http://127.0.0.1:${port}`);
    await Promise.all(
      servers.map((url) => waitUntil(async () => (await fetch(`${url}/healthz`).catch(() => null))?.status === 200, 60_000)),
    );
    await waitUntil(async () => (await listeningWorkers(observer)) >= 2, 30_000);

    const world = await createChaosWorld(servers[0]!, { tenants: 4 });
    const load = new FailoverLoad(world, servers, seed);
    const loadAt = Date.now();
    load.start();
    await waitUntil(async () => (await count(observer, 'select count(*)::int as n from settlements')) >= WARM_UP_SETTLEMENTS, 60_000);

    // The standby falls behind: with synchronous commit, commits now wait for it; with
    // local commit, they are acknowledged without it.
    const stalledAt = Date.now();
    pair.replication.stall();
    let inFlight = 0;
    if (synchronousCommit === 'on') {
      await waitUntil(
        async () => (inFlight = await count(observer, "select count(*)::int as n from pg_stat_activity where wait_event = 'SyncRep'")) >= 3,
        30_000,
      );
    } else {
      const before = load.deliveries.size;
      await waitUntil(() => load.deliveries.size >= before + 15, 30_000);
    }
    const killedAt = await pair.killPrimary();
    pair.replication.cut();
    await pair.promoteStandby();
    const promotedAt = Date.now();
    const db = createPool(pair.standby.url, { max: 4 });
    pools.push(db);
    await waitUntil(async () => (await settlementsSince(db, killedAt)) >= SETTLEMENTS_AFTER_FAILOVER, 60_000);
    await load.stop();
    const stoppedAt = Date.now();

    const first = await db.query<{ seconds: number | null }>(
      'select extract(epoch from min(created_at) - $1::timestamptz)::float8 as seconds from settlements where created_at > $1::timestamptz',
      [killedAt],
    );
    const acknowledgedJobs = load.jobs.map((j) => j.id);
    const presentJobs = new Set(
      (await db.query<{ id: string }>('select id from jobs where id = any($1::uuid[])', [acknowledgedJobs])).rows.map((r) => r.id),
    );
    const storedEvents = new Set(
      (
        await db.query<{ event_key: string }>('select event_key from webhook_events where provider = $1 and event_key = any($2::text[])', [
          world.provider,
          [...load.deliveries.keys()],
        ])
      ).rows.map((r) => r.event_key),
    );
    const missing = [...load.deliveries.values()].filter((d) => !storedEvents.has(d.eventId));
    const creditCounts = await creditEntries(
      db,
      load.credits.map((c) => c.reference),
    );
    const billing = await checkBilling(
      db,
      load.jobs.filter((j) => presentJobs.has(j.id)),
    );
    const figures: FailoverFigures = {
      deliveries_acknowledged: load.deliveries.size,
      deliveries_lost: missing.length,
      jobs_acknowledged: acknowledgedJobs.length,
      jobs_lost: acknowledgedJobs.length - presentJobs.size,
      credits_acknowledged: load.credits.length,
      credits_lost: load.credits.filter((c) => !creditCounts.has(c.reference)).length,
      cancels_acknowledged: load.cancels.length,
      applied_twice: await appliedTwice(db, creditCounts),
      commits_in_flight_at_kill: inFlight,
      errors_5xx_before_failover: load.errors5xx.filter((e) => e.at < stalledAt).length,
      errors_5xx_during_switch: load.errors5xx.filter((e) => e.at >= stalledAt).length,
      seconds_kill_to_promoted: round((promotedAt - killedAt.getTime()) / 1000),
      seconds_kill_to_first_settlement: round(first.rows[0]!.seconds ?? Number.NaN),
      seconds_setup: round((loadAt - startedAt) / 1000),
      seconds_under_load: round((stoppedAt - loadAt) / 1000),
    };
    const crashes = processes
      .filter(({ proc }) => proc.child.exitCode !== null || proc.child.signalCode !== null)
      .map(({ name, proc }) => `${name}: ${proc.output().slice(-2000)}`);
    const listeners = await waitForListeners(db, 2);
    return {
      synchronousCommit,
      world,
      load,
      db,
      servers,
      figures,
      billing,
      redeliverable: missing.filter((d) => presentJobs.has(d.jobId)).map((d) => d.eventId),
      crashes,
      listeners,
      early5xx: load.errors5xx.filter((e) => e.at < stalledAt).map((e) => `${e.status} ${e.what} ${e.body}`),
      stop,
    };
  } catch (error) {
    const logs = processes.map(({ name, proc }) => `--- ${name}\n${proc.output().slice(-3000)}`).join('\n');
    await stop();
    throw new Error(`failover run ${label} failed: ${(error as Error).message}\n${logs}`, { cause: error });
  }
}

const liveProcesses = new Set<TallyProcess>();

/** SIGKILLs the tally processes of runs that did not stop (a test that timed out). */
export async function killLeftoverProcesses(): Promise<void> {
  await Promise.all([...liveProcesses].map((proc) => proc.stop('SIGKILL')));
  liveProcesses.clear();
}

/**
 * With HA_LOG_DIR set, each process's output, both servers' PostgreSQL logs and the
 * first server's /metrics are kept there (what a failover looks like to an operator).
 */
async function keepLogs(label: string, processes: { name: string; proc: TallyProcess }[], pair: ReplicaPair): Promise<void> {
  const dir = process.env.HA_LOG_DIR;
  if (!dir) return;
  await mkdir(dir, { recursive: true });
  for (const { name, proc } of processes) await writeFile(join(dir, `${label}-${name}.log`), proc.output());
  for (const node of [pair.primary, pair.standby])
    await copyFile(node.log, join(dir, `${label}-postgres-${node.name}.log`)).catch(() => {});
  const serve = processes.find((p) => p.name === 'serve-0');
  const port = serve?.proc.child.spawnargs[serve.proc.child.spawnargs.indexOf('--port') + 1];
  const metrics = await fetch(`http://127.0.0.1:${port}/metrics`)
    .then((r) => r.text())
    .catch((e: Error) => e.message);
  await writeFile(join(dir, `${label}-serve-0.metrics`), metrics);
}

/** Every acknowledged job of the run that the new primary has, settled (terminal, no event open). */
export async function waitForJobsSettled(outcome: FailoverOutcome): Promise<void> {
  const present = (
    await outcome.db.query<{ id: string }>('select id from jobs where id = any($1::uuid[])', [outcome.load.jobs.map((j) => j.id)])
  ).rows.map((r) => r.id);
  await waitForSettled(outcome.db, present, 60_000);
}

/** Each tenant's wallet through the API: the first credit, plus every acknowledged top-up, minus what its jobs cost; nothing reserved. */
export async function walletMismatches(outcome: FailoverOutcome): Promise<string[]> {
  const wrong: string[] = [];
  for (const tenant of outcome.world.tenants) {
    const credited = BigInt(outcome.load.credits.filter((c) => c.tenant === tenant).length) * micros(CREDIT_AMOUNT);
    const cost = outcome.load.jobs.filter((j) => j.tenantId === tenant.id).reduce((sum, j) => sum + expectedCharge(j), 0n);
    const expected = { balance: formatMicros(micros(CREDIT) + credited - cost), reserved: formatMicros(0n) };
    const wallet = await new Client(outcome.servers[0]!).as(tenant.apiKey).get(`/v1/wallets/${tenant.walletId}`);
    const actual = { balance: wallet.body?.balance, reserved: wallet.body?.reserved };
    if (actual.balance !== expected.balance || actual.reserved !== expected.reserved)
      wrong.push(`${tenant.id}: ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
  }
  return wrong;
}

/** The provider's own usage records for every job it finished with usage (POST /v1/provider-usage). */
export async function importProviderUsage(outcome: FailoverOutcome, importId: string): Promise<number> {
  const records = outcome.load.jobs
    .filter((j) => j.scenario.billedUsage)
    .map((j) => ({ provider: outcome.world.provider, provider_job_ref: outcome.load.refs.get(j.id)!, usage: j.scenario.billedUsage! }));
  const answer = await outcome.world.admin.post('/v1/provider-usage', { import_id: importId, records });
  if (answer.status !== 201) throw new Error(`usage import: ${answer.status} ${JSON.stringify(answer.body)}`);
  return records.length;
}

export interface ReconciliationFindings {
  clean: boolean;
  /** how many exceptions of each class */
  classes: Record<string, number>;
  /** the provider_job_ref of every usage_mismatch */
  usageMismatchRefs: Set<string>;
}

/** POST /v1/reconciliation/runs: the run's exception classes, with how many of each. */
export async function reconciliationRun(outcome: FailoverOutcome): Promise<ReconciliationFindings> {
  const run = await outcome.world.admin.post('/v1/reconciliation/runs', {});
  if (run.status !== 201) throw new Error(`reconciliation: ${run.status} ${JSON.stringify(run.body)}`);
  const exceptions = run.body.exceptions as { class: string; objects: { provider_job_ref?: string } }[];
  const classes: Record<string, number> = {};
  for (const e of exceptions) classes[e.class] = (classes[e.class] ?? 0) + 1;
  const usageMismatchRefs = new Set(exceptions.filter((e) => e.class === 'usage_mismatch').map((e) => e.objects.provider_job_ref!));
  return { clean: run.body.clean as boolean, classes, usageMismatchRefs };
}

/** Every accepted event of the run's provider on the new primary has been settled (or dead-lettered). */
export async function waitForQueueDrained(outcome: FailoverOutcome): Promise<void> {
  await waitUntil(async () => {
    const { rows } = await outcome.db.query<{ n: number }>(
      "select count(*)::int as n from webhook_events where provider = $1 and state in ('pending', 'processing')",
      [outcome.world.provider],
    );
    return rows[0]!.n === 0;
  }, 60_000);
}

/** Acknowledged jobs the provider finished with usage that the new primary has not captured (absent jobs included). */
export async function unbilledJobs(outcome: FailoverOutcome): Promise<string[]> {
  const withUsage = outcome.load.jobs.filter((j) => j.scenario.billedUsage).map((j) => j.id);
  const { rows } = await outcome.db.query<{ job_id: string }>(
    "select job_id from settlements where charge_type = 'capture' and job_id = any($1::uuid[])",
    [withUsage],
  );
  const captured = new Set(rows.map((r) => r.job_id));
  return withUsage.filter((id) => !captured.has(id));
}

/** The provider redelivers what it was told was received but the new primary does not have: same bytes, same webhook-id. */
export async function redeliver(outcome: FailoverOutcome, eventIds: string[]): Promise<number[]> {
  const results = await Promise.all(
    eventIds.map((id) => send(outcome.servers[0]!, outcome.world.provider, outcome.load.deliveries.get(id)!)),
  );
  return results.map((r) => r.status);
}

/**
 * The operator re-sends every acknowledged top-up with its original Idempotency-Key (from
 * the payment system's records): the answers' statuses.
 */
export async function resendCredits(outcome: FailoverOutcome): Promise<number[]> {
  const answers = await Promise.all(
    outcome.load.credits.map(({ tenant, reference }) =>
      outcome.world.admin.post(
        `/v1/wallets/${tenant.walletId}/credits`,
        { amount: CREDIT_AMOUNT, reference },
        { 'idempotency-key': reference },
      ),
    ),
  );
  return answers.map((a) => a.status);
}

/**
 * Effects applied more than once: a job resolved twice (capture and release) or charged
 * more than its scenario, a credit's top-up entered twice, any ledger key entered twice.
 */
export async function appliedTwice(db: Pool, creditCounts: Map<string, number>): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `select ((select count(*) from (select job_id from settlements where charge_type in ('capture', 'release') group by job_id having count(*) > 1) r)
           + (select count(*) from (select settlement_key, entry_type from ledger_entries group by 1, 2 having count(*) > 1) e))::int as n`,
  );
  return rows[0]!.n + [...creditCounts.values()].filter((n) => n > 1).length;
}

export async function creditEntries(db: Pool, references: string[]): Promise<Map<string, number>> {
  const { rows } = await db.query<{ reference: string; n: number }>(
    "select reference, count(*)::int as n from ledger_entries where entry_type = 'credit' and reference = any($1::text[]) group by reference",
    [references],
  );
  return new Map(rows.map((r) => [r.reference, r.n]));
}

async function count(db: Pool, sql: string): Promise<number> {
  return (await db.query<{ n: number }>(sql)).rows[0]!.n;
}

async function settlementsSince(db: Pool, at: Date): Promise<number> {
  return (await db.query<{ n: number }>('select count(*)::int as n from settlements where created_at > $1', [at])).rows[0]!.n;
}

/** The workers' LISTEN connections on the new primary: they follow it (polling covered the gap). */
async function waitForListeners(db: Pool, expected: number): Promise<number> {
  let n = 0;
  await waitUntil(async () => (n = await listeningWorkers(db)) >= expected, 30_000).catch(() => {});
  return n;
}

function round(seconds: number): number {
  return Math.round(seconds * 100) / 100;
}
