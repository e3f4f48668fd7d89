import { fork } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { BENCH_DIST } from './app.js';
import { benchPool, checkpoint, recreateDatabase } from './database.js';
import type { LoadMessage, LoadPlan, LoadReport, Percentiles } from './load-protocol.js';
import { explainClaim, readProgress, readSettleTimes, type ClaimPlan } from './measure.js';
import { exitReason, freePort, runTally, waitFor, type TallyProcess } from './processes.js';
import { clockTicks, machineTicks, postgresCpu, postgresCpuDelta, type PostgresCpu } from './procs.js';
import { bars, note } from './progress.js';
import { enableStatements, readStatements, resetStatements, type StatementStat } from './statements.js';
import { verifyMoney, type Verification } from './verify.js';
import { startWaitSampler, type WaitProfile } from './waits.js';
import { CURRENCY, MODEL, buildWorld, type World } from './world.js';
import { countsBetween, readDriverCounts } from './driver-counts.js';
import { snapshotTableWrites, tableWritesBetween, type TableWrites } from './table-writes.js';

/**
 * hot: every job on one wallet; spread: round-robin over --tenants wallets; growing: as
 * spread, each job submitted with auto_extend and sending three progress reports before
 * its completion, so that its hold grows once while it runs (one extension per job).
 */
export type ScenarioName = 'hot' | 'spread' | 'growing';
export const SCENARIOS: readonly ScenarioName[] = ['hot', 'spread', 'growing'];

export interface ScenarioConfig {
  name: ScenarioName;
  tenants: number;
  /** grants per wallet (1: one credit) */
  grants: number;
  jobs: number;
  loadConcurrency: number;
  rate: number;
  workers: number;
  workerConcurrency: number;
  /** false: the worker gets no --concurrency and runs its default (workerConcurrency says what that is) */
  passConcurrency: boolean;
  /** deliver everything first, then start the workers: intake and settlement measured apart */
  separate: boolean;
  seed: number;
  logLevel: string;
  profile: boolean;
  statStatements: boolean;
  workDir: string;
  adminUrl: string;
  postmasterPid: number | null;
}

export interface ScenarioResult {
  name: ScenarioName;
  /** concurrent: workers settle while deliveries arrive; separate: workers start once all are accepted */
  mode: 'concurrent' | 'separate';
  tenants: number;
  grants: number;
  jobs: number;
  deliveries: number;
  /** HTTP 200s ÷ (first request → last answer) */
  acceptedPerSecond: number;
  deliverySeconds: number;
  /** jobs ÷ (first delivery received → last capture committed); separate: ÷ (first event processed → last capture) */
  jobsPerSecond: number;
  settleSeconds: number;
  /** events (2 per job; growing: 5, its 3 progress reports included) ÷ (first delivery → last event processed) */
  eventsPerSecond: number;
  drainSeconds: number;
  /** receipt → settled, of the events that applied a capture */
  latencyMs: Percentiles;
  httpMs: Percentiles;
  retries: number;
  peakRssBytes: { server: number | null; workers: (number | null)[] };
  cpuSeconds: CpuSeconds;
  profile: {
    /** round trips to PostgreSQL per job, counted at the driver by serve and the workers (BEGIN and COMMIT included) */
    statementsPerJob: number | null;
    /** explicit transactions (COMMITs) per job, counted at the driver */
    transactionsPerJob: number | null;
    /** WAL bytes PostgreSQL wrote per job in the window (pg_current_wal_lsn) */
    walBytesPerJob: number | null;
    /** rows written per table in the window (and by the verification's few writes) */
    tableWrites: TableWrites[];
    /** PostgreSQL time per job executing and planning Tally's statements (lock waits included), ms */
    executeMsPerJob: number | null;
    planMsPerJob: number | null;
    statements: (StatementStat & { callsPerJob: number })[];
    waits: WaitProfile | null;
    claim: ClaimPlan | null;
  };
  verification: Verification;
}

export interface CpuSeconds {
  server: number | null;
  workers: number | null;
  loadGenerator: number;
  /** this harness: polling, sampling */
  harness: number;
  /** PostgreSQL processes by whom they served; null when PostgreSQL is not on this machine */
  postgres: Record<string, number> | null;
  /** busy CPU of the whole machine minus all of the above: other work sharing the CPUs */
  otherProcesses: number | null;
  /** CPUs × window: the CPU time there was */
  available: number | null;
  /** seconds runnable but waiting for a CPU (/proc/<pid>/schedstat): what CPU contention cost */
  runQueueWait: { server: number | null; workers: number | null; postgres: number | null };
  loadAverage: number;
}

const POLL_MS = 250;
/** No job settled and no event processed for this long: the run is stuck, not slow. */
const STALL_MS = 120_000;
const TOP_STATEMENTS = 25;
const REPORT_GRACE_MS = 2000;

export async function runScenario(config: ScenarioConfig): Promise<ScenarioResult> {
  const title = `[${config.name}]`;
  const url = await recreateDatabase(config.adminUrl, `tally_bench_${config.name}`);
  const pool = benchPool(url);
  const processes: TallyProcess[] = [];
  try {
    const statStatements = config.profile && config.statStatements && (await enableStatements(pool));
    const adminToken = `bench-admin-${process.pid}`;
    const env = {
      DATABASE_URL: url,
      TALLY_ADMIN_TOKEN: adminToken,
      LOG_LEVEL: config.logLevel,
      HOST: '127.0.0.1',
      // No scheduled reconciliation inside the measured window; the harness runs one after.
      TALLY_RECONCILE_INTERVAL_SECONDS: '0',
    };
    const port = await freePort();
    const server = runTally(
      'serve',
      ['serve', '--port', String(port), '--workers', '0'],
      env,
      join(config.workDir, `${config.name}-serve.log`),
    );
    processes.push(server);
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitFor(
      'tally serve answering /healthz',
      async () => (await fetch(`${baseUrl}/healthz`)).status === 200,
      60_000,
      () => exitReason(server),
    );
    let workers: TallyProcess[] = [];
    const metricsUrls = [`${baseUrl}/metrics`];
    const startWorkers = async () => {
      const ports = await Promise.all(Array.from({ length: config.workers }, () => freePort()));
      metricsUrls.push(...ports.map((p) => `http://127.0.0.1:${p}/metrics`));
      workers = ports.map((metricsPort, i) =>
        runTally(
          `worker-${i + 1}`,
          ['worker', '--metrics-port', String(metricsPort), ...(config.passConcurrency ? ['--concurrency', String(config.workerConcurrency)] : [])],
          env,
          join(config.workDir, `${config.name}-worker-${i + 1}.log`),
        ),
      );
      processes.push(...workers);
      await waitFor(
        'workers listening',
        async () => (await listeners(pool)) >= config.workers,
        60_000,
        () => workers.map(exitReason).find((r) => r !== null) ?? null,
      );
    };
    if (!config.separate) await startWorkers();
    note(
      `${title} tally serve (pid ${server.pid}) ${config.separate ? 'running (workers start once every delivery is accepted)' : `and ${config.workers} worker process(es) × ${config.workerConcurrency} running`}; creating ${config.jobs} jobs over ${config.tenants} wallet(s)`,
    );

    const setup = bars(title, { jobs: config.jobs });
    let created = 0;
    const world = await buildWorld(baseUrl, adminToken, {
      tenants: config.tenants,
      jobs: config.jobs,
      seed: config.seed,
      grants: config.grants,
      growing: config.name === 'growing',
      onJob: () => setup.update({ jobs: ++created }),
    });
    setup.stop();

    // The measured window starts here.
    await checkpoint(pool);
    if (statStatements) await resetStatements(pool);
    const before = snapshot(server, workers, config.postmasterPid);
    const countsBefore = config.separate ? null : await readDriverCounts(pool, metricsUrls);
    const tablesBefore = await snapshotTableWrites(pool);
    const sampler = config.profile ? startWaitSampler(pool) : null;
    const { load, claim } = await deliverAndSettle(config, world, pool, () => processes, config.separate ? startWorkers : null);
    const after = snapshot(server, workers, config.postmasterPid);
    const counts = countsBefore ? await countsBetween(pool, countsBefore, await readDriverCounts(pool, metricsUrls)) : null;
    const waits = sampler?.stop() ?? null;
    const statements = statStatements ? await readStatements(pool) : null;
    const peakRssBytes = { server: server.peakRssBytes(), workers: workers.map((w) => w.peakRssBytes()) };
    const times = await readSettleTimes(pool);
    const cpuSeconds = await cpuOf(pool, before, after, load.cpuSeconds);

    note(`${title} verifying the money`);
    const verification = await verifyMoney(pool, url, world, load);
    // Their backends flush their table statistics as they exit.
    await Promise.all(processes.map((p) => p.stop()));
    const tableWrites = tableWritesBetween(tablesBefore, await snapshotTableWrites(pool));
    const n = config.jobs;
    return {
      name: config.name,
      mode: config.separate ? 'separate' : 'concurrent',
      tenants: config.tenants,
      grants: config.grants,
      jobs: n,
      deliveries: load.deliveries,
      acceptedPerSecond: (load.statuses['200'] ?? 0) / ((load.lastAnswerAt - load.firstSendAt) / 1000),
      deliverySeconds: (load.lastAnswerAt - load.firstSendAt) / 1000,
      jobsPerSecond: n / (config.separate ? times.settleFromFirstProcessed : times.settleSeconds),
      settleSeconds: config.separate ? times.settleFromFirstProcessed : times.settleSeconds,
      eventsPerSecond: times.events / (config.separate ? times.drainFromFirstProcessed : times.drainSeconds),
      drainSeconds: config.separate ? times.drainFromFirstProcessed : times.drainSeconds,
      latencyMs: times.latencyMs,
      httpMs: load.httpMs,
      retries: load.retries,
      peakRssBytes,
      cpuSeconds,
      profile: {
        statementsPerJob: counts ? counts.statements / n : statements ? statements.totalCalls / n : null,
        transactionsPerJob: counts ? counts.commits / n : statements ? statements.commits / n : null,
        walBytesPerJob: counts ? counts.walBytes / n : null,
        tableWrites,
        executeMsPerJob: statements ? statements.totalMs / n : null,
        planMsPerJob: statements ? statements.planMs / n : null,
        statements: (statements?.statements ?? []).slice(0, TOP_STATEMENTS).map((s) => ({ ...s, callsPerJob: s.calls / n })),
        waits,
        claim,
      },
      verification,
    };
  } finally {
    await Promise.all(processes.map((p) => p.stop()));
    await pool.end();
  }
}

async function listeners(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `/* bench */ select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'tally-worker-listen'`,
  );
  return rows[0]!.n;
}

/** Runs the load generator child and follows settlement in the database until every job is terminal. */
async function deliverAndSettle(
  config: ScenarioConfig,
  world: World,
  pool: pg.Pool,
  processes: () => TallyProcess[],
  startWorkers: (() => Promise<void>) | null,
): Promise<{ load: LoadReport; claim: ClaimPlan | null }> {
  const jobsFile = join(config.workDir, `${config.name}-jobs.json`);
  await writeFile(
    jobsFile,
    JSON.stringify(
      world.jobs.map((j) => ({ id: j.id, tenantId: j.tenantId, usage: j.usage, ...(j.progress.length > 0 ? { progress: j.progress } : {}) })),
    ),
  );
  // three completions per job (original, duplicate, re-emission) and its progress reports
  const deliveries = world.jobs.reduce((n, j) => n + 3 + j.progress.length, 0);
  const plan: LoadPlan = {
    baseUrl: world.baseUrl,
    provider: world.provider,
    secret: world.secret,
    jobsFile,
    concurrency: config.loadConcurrency,
    rate: config.rate,
    seed: config.seed,
    model: MODEL,
    currency: CURRENCY,
  };
  const child = fork(join(BENCH_DIST, 'load-generator.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = once(child, 'exit');
  const progress = bars(`[${config.name}]`, { delivered: deliveries, settled: config.jobs });
  let load: LoadReport | null = null;
  let failure: string | null = null;
  let delivered = 0;
  child.on('message', (message: LoadMessage) => {
    if (message.type === 'progress') delivered = message.done;
    if (message.type === 'done') load = message.report;
    if (message.type === 'failed') failure = message.message;
  });
  child.send(plan);

  const started = Date.now();
  let claim: ClaimPlan | null = null;
  let explained = false;
  let last = { terminal: -1, openEvents: -1 };
  let lastChange = Date.now();
  let goneAt: number | undefined;
  try {
    for (;;) {
      const reason = processes()
        .map(exitReason)
        .find((r) => r !== null);
      if (reason) throw new Error(reason);
      if (failure) throw new Error(`the load generator failed: ${failure}`);
      // Its last message may still be in the pipe when it exits: allow a moment.
      if (child.exitCode !== null && !load && Date.now() - (goneAt ??= Date.now()) > REPORT_GRACE_MS) {
        throw new Error(`the load generator exited (${child.exitCode}) without a report`);
      }
      const now = await readProgress(pool);
      const seconds = (Date.now() - started) / 1000;
      const loadDone = load !== null;
      progress.update(
        { delivered: loadDone ? deliveries : delivered, settled: now.terminal },
        {
          delivered: `${Math.round(delivered / seconds)}/s`,
          settled: `${Math.round(now.terminal / seconds)}/s · backlog ${now.openEvents}`,
        },
      );
      // The claim's plan, once, when the backlog is at its deepest: as the last delivery is answered.
      if (loadDone && !explained) {
        explained = true;
        if (config.profile) claim = await explainClaim(pool);
        if (startWorkers) {
          note(`[${config.name}] every delivery accepted; starting the workers`);
          await startWorkers();
          lastChange = Date.now();
        }
      }
      if (loadDone && now.terminal === config.jobs && now.openEvents === 0) break;
      if (now.terminal !== last.terminal || now.openEvents !== last.openEvents) lastChange = Date.now();
      else if (Date.now() - lastChange > STALL_MS) {
        throw new Error(
          `stalled: ${now.terminal}/${config.jobs} jobs settled and ${now.openEvents} events open, unchanged for ${STALL_MS / 1000} s`,
        );
      }
      last = now;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  } finally {
    progress.stop();
    if (child.exitCode === null) {
      child.kill();
    }
    await exited;
  }
  return { load: load!, claim };
}

interface Snapshot {
  server: { ticks: number | null; waitNs: number | null };
  workers: { ticks: number | null; waitNs: number | null }[];
  postgres: PostgresCpu | null;
  machine: { busy: number; total: number } | null;
  harness: NodeJS.CpuUsage;
}

function snapshot(server: TallyProcess, workers: TallyProcess[], postmasterPid: number | null): Snapshot {
  const of = (p: TallyProcess) => ({ ticks: p.cpuTicks(), waitNs: p.runQueueWaitNs() });
  return {
    server: of(server),
    workers: workers.map(of),
    postgres: postmasterPid ? postgresCpu(postmasterPid) : null,
    machine: machineTicks(),
    harness: process.cpuUsage(),
  };
}

async function cpuOf(pool: pg.Pool, before: Snapshot, after: Snapshot, loadGenerator: number): Promise<CpuSeconds> {
  const hz = clockTicks();
  const diff = (a: number | null | undefined, b: number | null | undefined, unit: number) =>
    a === null || a === undefined || b === null || b === undefined ? null : (b - a) / unit;
  const sum = (values: (number | null)[]) => (values.some((v) => v === null) ? null : values.reduce<number>((a, b) => a + b!, 0));
  const server = diff(before.server.ticks, after.server.ticks, hz);
  // Workers started inside the window (--separate) count from zero.
  const workers = sum(after.workers.map((w, i) => diff(before.workers[i]?.ticks ?? 0, w.ticks, hz)));
  const harnessUsage = process.cpuUsage(before.harness);
  const harness = (harnessUsage.user + harnessUsage.system) / 1e6;
  const postgres = before.postgres && after.postgres ? await postgresCpuByApplication(pool, before.postgres, after.postgres) : null;
  const postgresTotal = postgres ? Object.values(postgres).reduce((a, b) => a + b, 0) : null;
  const machineBusy = diff(before.machine?.busy, after.machine?.busy, hz);
  const machineTotal = diff(before.machine?.total, after.machine?.total, hz);
  const ours = sum([server, workers, postgresTotal, loadGenerator, harness]);
  return {
    server,
    workers,
    loadGenerator,
    harness,
    postgres,
    otherProcesses: machineBusy !== null && ours !== null ? Math.max(0, machineBusy - ours) : null,
    available: machineTotal,
    runQueueWait: {
      server: diff(before.server.waitNs, after.server.waitNs, 1e9),
      workers: sum(after.workers.map((w, i) => diff(before.workers[i]?.waitNs ?? 0, w.waitNs, 1e9))),
      postgres: before.postgres && after.postgres ? postgresCpuDelta(before.postgres, after.postgres).runQueueWait : null,
    },
    loadAverage: loadavg()[0] ?? 0,
  };
}

/**
 * PostgreSQL's CPU in the window, by whom each process served: the application of
 * its connection (tally-serve, tally-worker, …), or its background role (walwriter,
 * checkpointer, …). Backends that exited in the window are counted together.
 */
async function postgresCpuByApplication(pool: pg.Pool, before: PostgresCpu, after: PostgresCpu): Promise<Record<string, number>> {
  const delta = postgresCpuDelta(before, after);
  const { rows } = await pool.query<{ pid: number; application_name: string; backend_type: string; datname: string | null; here: boolean }>(
    `/* bench */ select pid, application_name, backend_type, datname, datname = current_database() as here from pg_stat_activity`,
  );
  const who = new Map(
    rows.map((r) => [
      r.pid,
      r.backend_type !== 'client backend' ? r.backend_type : r.here ? r.application_name || '(no name)' : 'other databases',
    ]),
  );
  const out: Record<string, number> = {};
  const add = (key: string, seconds: number) => (out[key] = (out[key] ?? 0) + seconds);
  for (const [pid, seconds] of delta.byPid) add(who.get(pid) ?? 'exited backends', seconds);
  add('exited backends', delta.exited);
  add('postmaster', delta.postmaster);
  return Object.fromEntries(
    Object.entries(out)
      .filter(([, s]) => s > 0)
      .sort((a, b) => b[1] - a[1]),
  );
}
