import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './app.js';
import { Command, InvalidArgumentError, Option } from 'commander';
import { startEmbedded, type EmbeddedServer } from './app.js';
import { benchPool, checkpoint, dropDatabase, recreateDatabase, serverInfo } from './database.js';
import { formatBalanceAt, measureBalanceAt, type BalanceAtResult } from './balance-at.js';
import { formatClaimExplain, measureClaimExplain, type ClaimExplainResult } from './claim-explain.js';
import { measureLimit, prepareLimit, type LimitResult } from './limit.js';
import { formatReconcileScale, measureReconcileScale, type ReconcileScaleResult } from './reconcile-scale.js';
import { procStat } from './procs.js';
import { note } from './progress.js';
import { formatReport, ratiosOf, TARGETS, type BenchReport } from './report.js';
import { runScenario, SCENARIOS, type ScenarioName, type ScenarioResult } from './scenario.js';
import { findPgbench, measureTpcb } from './tpcb.js';
import type { TpcbResult } from './tpcb-spec.js';

/**
 * `npm run bench`: Tally's throughput under a duplicate-heavy webhook load, next to
 * pgbench TPC-B on the same PostgreSQL in the same run — and the money checked
 * afterwards. See README.md ("Benchmark") and bench/RESULTS.md.
 */

interface Options {
  jobs: number;
  concurrency: number;
  workers: number;
  /** absent: the worker runs with its default, which the report names */
  workerConcurrency: number;
  workerConcurrencyGiven: boolean;
  separate: boolean;
  tenants: number;
  grants: number;
  scenarios: ScenarioName[];
  limitSeconds: number;
  minimalLimit?: boolean;
  tpcbClients?: number;
  rate: number;
  seed: number;
  logLevel: string;
  json: boolean;
  out?: string;
  keep: boolean;
  profile: boolean;
  pgSetting: string[];
  balanceAtEntries: number;
  balanceAtSamples: number;
  balanceAtOnly?: boolean;
  reconcileEntries: number;
  reconcileTenants: number;
  reconcileOnly?: boolean;
  claimExplainBacklog: number;
  claimExplainOnly?: boolean;
}

function positive(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

function nonNegative(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a non-negative integer');
  return n;
}

function collectSetting(value: string, previous: string[]): string[] {
  if (!/^[a-z_.]+=\S+$/.test(value)) throw new InvalidArgumentError('expected name=value, e.g. synchronous_commit=off');
  return [...previous, value];
}

function scenarioList(value: string): ScenarioName[] {
  const names = value.split(',').map((s) => s.trim());
  for (const name of names)
    if (!(SCENARIOS as readonly string[]).includes(name))
      throw new InvalidArgumentError(`expected a comma-separated list of ${SCENARIOS.join(', ')} (e.g. hot,spread)`);
  return names as ScenarioName[];
}

function parseOptions(): Options {
  const program = new Command()
    .name('npm run bench --')
    .description("Tally's settlement throughput against the database's own limit, with the money verified")
    .option('--jobs <n>', 'jobs per scenario', positive, 5000)
    .option('--concurrency <n>', 'deliveries in flight from the load generator', positive, 64)
    .option('--workers <n>', 'tally worker processes', positive, 1)
    .option(
      '--worker-concurrency <n>',
      "tally worker --concurrency (default: the worker's own, two per core; TPC-B also runs with workers × this many clients)",
      positive,
    )
    .option('--separate', 'deliver everything first, then start the workers (intake and settlement measured apart)')
    .option('--tenants <n>', 'wallets of the spread and growing scenarios', positive, 100)
    .option(
      '--grants <n>',
      'grants per wallet: 1 is one credit (the default); more adds promotional grants of mixed priority and expiry, drawn first',
      positive,
      1,
    )
    .option(
      '--scenarios <list>',
      "comma-separated: hot (one wallet), spread (--tenants wallets), growing (as spread, each job's hold extended once while it runs)",
      scenarioList,
      ['hot', 'spread'] as ScenarioName[],
    )
    .option(
      '--limit-seconds <n>',
      'seconds of the limit (pgbench TPC-B; BENCH_PGBENCH=none forces the built-in one) and of each --minimal-limit shape',
      positive,
      10,
    )
    .option(
      '--tpcb-clients <n>',
      "pgbench's clients (default: workers × worker concurrency, the connections Tally's workers use; 1 is pgbench's own default)",
      positive,
    )
    .option('--minimal-limit', 'also measure minimal durable transactions (BEGIN; UPDATE; INSERT; COMMIT) on distinct rows and on one row')
    .option('--rate <n>', 'deliveries per second (0 = as fast as answered)', nonNegative, 0)
    .option('--seed <n>', 'seed of usage and delivery order', nonNegative, 1)
    .addOption(new Option('--log-level <level>', 'LOG_LEVEL of serve and worker (default: theirs, info)').default('info'))
    .option('--json', 'print the report as JSON on stdout (use npm run -s bench -- --json)')
    .option('--out <file>', 'also write the JSON report to this file')
    .option('--keep', 'keep the work folder (logs, databases) afterwards')
    .option('--no-profile', 'no pg_stat_statements, wait sampling or EXPLAIN')
    .option(
      '--pg-setting <name=value>',
      'a setting of the embedded PostgreSQL, repeatable (experiments: synchronous_commit=off)',
      collectSetting,
      [] as string[],
    )
    .option('--balance-at-entries <n>', 'entries of the wallet whose balance at an instant is measured (0: skip)', nonNegative, 1_000_000)
    .option('--balance-at-samples <n>', 'random instants asked for', positive, 200)
    .option('--balance-at-only', 'only the balance-at-an-instant measurement (no limit, no scenarios)')
    .option(
      '--reconcile-entries <n>',
      'ledger entries a full tally reconcile is timed at (also 1/10 and 3/10 of it; 0: skip)',
      nonNegative,
      1_000_000,
    )
    .option(
      '--reconcile-tenants <n>',
      'wallets of that ledger, each with a job settled through the API as the template of its copies',
      positive,
      100,
    )
    .option('--reconcile-only', 'only the reconciliation-at-scale measurement (no limit, no scenarios)')
    .option(
      '--claim-explain-backlog <n>',
      'deepest backlog the claim is EXPLAINed at (also 1/10 and 1/100 of it; 0: skip)',
      nonNegative,
      100_000,
    )
    .option('--claim-explain-only', 'only the claim under EXPLAIN at growing backlogs (no limit, no scenarios)');
  program.parse(process.argv);
  const options = program.opts<Options>();
  options.workerConcurrencyGiven = options.workerConcurrency !== undefined;
  return options;
}

function machine(): BenchReport['machine'] {
  return {
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryBytes: totalmem(),
    node: process.version,
    kernel: release(),
  };
}

/** The postmaster of a backend, if that backend is a PostgreSQL process on this machine. */
function localPostmaster(backendPid: number): number | null {
  const comm = (pid: number) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
      return null;
    }
  };
  const stat = procStat(backendPid);
  // A remote server's backend pid may exist here by chance: both must be postgres processes.
  return stat && comm(backendPid) === 'postgres' && comm(stat.ppid) === 'postgres' ? stat.ppid : null;
}

/** What `tally worker` runs with no --concurrency: read from the built CLI, not repeated here. */
async function defaultWorkerConcurrency(): Promise<number> {
  const defaults = (await import(pathToFileURL(join(ROOT, 'dist', 'cli', 'defaults.js')).href)) as { DEFAULT_SETTLE_CONCURRENCY: number };
  return defaults.DEFAULT_SETTLE_CONCURRENCY;
}

async function main(): Promise<boolean> {
  const options = parseOptions();
  options.workerConcurrency ??= await defaultWorkerConcurrency();
  const external = process.env.DATABASE_URL;
  if (external && options.pgSetting.length > 0)
    throw new Error('--pg-setting applies to the embedded PostgreSQL; with DATABASE_URL, configure your server');
  const workDir = await mkdtemp(join(tmpdir(), 'tally-bench-'));
  let embedded: EmbeddedServer | null = null;
  let ok = false;
  try {
    note(`work folder ${workDir} (process logs are there)`);
    if (!external) note('starting an embedded PostgreSQL in the work folder…');
    embedded = external
      ? null
      : await startEmbedded({
          dataDir: join(workDir, 'db'),
          persistent: false,
          postgresFlags: [
            ...(options.profile ? ['-c', 'shared_preload_libraries=pg_stat_statements', '-c', 'pg_stat_statements.track_planning=on'] : []),
            ...options.pgSetting.flatMap((setting) => ['-c', setting]),
          ],
        });
    const adminUrl = external ?? embedded!.url;
    const admin = benchPool(adminUrl, 2);
    const info = await serverInfo(admin, localPostmaster).finally(() => admin.end());
    const connections = options.workers * options.workerConcurrency;
    const balanceAt = (): Promise<BalanceAtResult> =>
      measureBalanceAt({
        adminUrl,
        workDir,
        logLevel: options.logLevel,
        entries: options.balanceAtEntries,
        samples: options.balanceAtSamples,
        seed: options.seed,
      });
    const claimExplain = (): Promise<ClaimExplainResult> =>
      measureClaimExplain({ adminUrl, workDir, backlog: options.claimExplainBacklog, batch: 32, claims: 200 });
    if (options.claimExplainOnly) {
      const result = await claimExplain();
      process.stdout.write(
        options.json
          ? `${JSON.stringify(result, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`
          : `${formatClaimExplain(result)}\n`,
      );
      ok = true;
      if (external && !options.keep) await dropDatabase(adminUrl, 'tally_bench_claim');
      return ok;
    }
    const reconcileScale = (): Promise<ReconcileScaleResult> =>
      measureReconcileScale({
        adminUrl,
        workDir,
        logLevel: options.logLevel,
        entries: options.reconcileEntries,
        tenants: options.reconcileTenants,
        seed: options.seed,
        inconsistency: true,
      });
    if (options.reconcileOnly) {
      const result = await reconcileScale();
      process.stdout.write(options.json ? `${JSON.stringify(result, null, 2)}\n` : `${formatReconcileScale(result)}\n`);
      ok = result.correct;
      if (external && !options.keep) await dropDatabase(adminUrl, 'tally_bench_rec');
      return ok;
    }
    if (options.balanceAtOnly) {
      const result = await balanceAt();
      process.stdout.write(options.json ? `${JSON.stringify(result, null, 2)}\n` : `${formatBalanceAt(result)}\n`);
      ok = result.correct;
      if (external && !options.keep) await dropDatabase(adminUrl, 'tally_bench_at');
      return ok;
    }

    const pgbench = findPgbench();
    // The limit is pgbench's best on this server: at scale 1 every transaction updates the
    // one branch row, so more clients can be slower than one (pgbench's own default).
    const tpcbClientCounts = options.tpcbClients ? [options.tpcbClients] : [...new Set([1, connections])];
    const tpcbUrl = await recreateDatabase(adminUrl, 'tally_bench_tpcb');
    const tpcbRuns: TpcbResult[] = [];
    for (const clients of tpcbClientCounts) {
      note(
        `measuring the limit: TPC-B with ${pgbench ?? 'the built-in tpcb-like script (no pgbench found)'}, ${clients} client(s), ${options.limitSeconds} s`,
      );
      const run = await measureTpcb(
        {
          url: tpcbUrl,
          clients,
          seconds: options.limitSeconds,
          postmasterPid: info.postmasterPid,
          workDir,
          seed: options.seed,
          onProgress: (message) => note(`  tpcb: ${message}`),
          checkpoint: async () => {
            const pool = benchPool(tpcbUrl, 1);
            await checkpoint(pool).finally(() => pool.end());
          },
        },
        pgbench,
      );
      note(`  tpcb: ${Math.round(run.perSecond)} tx/s with ${clients} client(s) (${run.tool})`);
      tpcbRuns.push(run);
    }
    const tpcb = tpcbRuns.reduce((best, run) => (run.perSecond > best.perSecond ? run : best));
    const limitUrl = options.minimalLimit ? await recreateDatabase(adminUrl, 'tally_bench_limit') : null;
    const limit: LimitResult[] = [];
    if (limitUrl) {
      await prepareLimit(limitUrl);
      for (const shape of ['distinct_rows', 'one_row'] as const) {
        const pool = benchPool(limitUrl, 1);
        await checkpoint(pool);
        await pool.end();
        limit.push(
          await measureLimit(limitUrl, shape, connections, options.limitSeconds, info.postmasterPid, (tx, s) =>
            note(`  minimal tx ${shape}: ${tx} tx in ${s.toFixed(0)} s`),
          ),
        );
        note(`  minimal tx ${shape}: ${Math.round(limit[limit.length - 1]!.perSecond)} tx/s`);
      }
    }

    const scenarios: ScenarioResult[] = [];
    for (const name of options.scenarios) {
      const result = await runScenario({
        name,
        tenants: name === 'hot' ? 1 : options.tenants,
        grants: options.grants,
        jobs: options.jobs,
        loadConcurrency: options.concurrency,
        rate: options.rate,
        workers: options.workers,
        workerConcurrency: options.workerConcurrency,
        passConcurrency: options.workerConcurrencyGiven,
        separate: options.separate ?? false,
        seed: options.seed,
        logLevel: options.logLevel,
        profile: options.profile,
        statStatements: info.statStatements,
        workDir,
        adminUrl,
        postmasterPid: info.postmasterPid,
      });
      note(
        `[${name}] ${Math.round(result.jobsPerSecond)} jobs/s, ${Math.round(result.acceptedPerSecond)} deliveries/s; money ${result.verification.ok ? 'exact' : 'WRONG'}`,
      );
      scenarios.push(result);
    }

    const balanceAtResult = options.balanceAtEntries > 0 ? await balanceAt() : undefined;
    if (balanceAtResult)
      note(
        `[balance-at] ?at= p50 ${balanceAtResult.latencyMs.p50.toFixed(2)} ms, p99 ${balanceAtResult.latencyMs.p99.toFixed(2)} ms; ${balanceAtResult.correct ? 'exact' : 'WRONG'}`,
      );
    ok = scenarios.every((s) => s.verification.ok) && (balanceAtResult?.correct ?? true);
    const reconcileResult = options.reconcileEntries > 0 ? await reconcileScale() : undefined;
    if (reconcileResult) {
      note(formatReconcileScale(reconcileResult));
      ok &&= reconcileResult.correct;
    }
    const claimExplainResult = options.claimExplainBacklog > 0 ? await claimExplain() : undefined;
    if (claimExplainResult) note(formatClaimExplain(claimExplainResult));
    const report: BenchReport = {
      date: new Date().toISOString(),
      command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
      machine: machine(),
      postgres: { version: info.version, embedded: !external, settings: info.settings },
      options: { ...options },
      tpcb,
      tpcbRuns,
      limit,
      scenarios,
      targets: TARGETS,
      ratios: ratiosOf(scenarios, tpcb, limit),
      ...(balanceAtResult ? { balanceAt: balanceAtResult } : {}),
      ...(reconcileResult ? { reconcileScale: reconcileResult } : {}),
      ...(claimExplainResult ? { claimExplain: claimExplainResult } : {}),
      ok,
    };
    const json = JSON.stringify(report, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2);
    if (options.out) await writeFile(options.out, `${json}\n`);
    // The measurements at scale follow the scenarios' report, as each --…-only run prints them.
    const atScale = [
      reconcileResult ? formatReconcileScale(reconcileResult) : null,
      claimExplainResult ? formatClaimExplain(claimExplainResult) : null,
    ].filter((text) => text !== null);
    process.stdout.write(options.json ? `${json}\n` : `${[formatReport(report), ...atScale].join('\n\n')}\n`);
    if (!ok) note('the money is NOT exact: see "Verification" above');
    if (external && !options.keep)
      for (const name of [
        'tpcb',
        ...(limitUrl ? ['limit'] : []),
        ...options.scenarios,
        ...(balanceAtResult ? ['at'] : []),
        ...(reconcileResult ? ['rec'] : []),
        ...(options.claimExplainBacklog > 0 ? ['claim'] : []),
      ])
        await dropDatabase(adminUrl, `tally_bench_${name}`);
    return ok;
  } finally {
    await embedded?.stop();
    if (ok && !options.keep) await rm(workDir, { recursive: true, force: true });
    else note(`kept ${workDir}`);
  }
}

// Ctrl-C or kill: exit through process.exit, so that 'exit' handlers stop the children
// and the embedded PostgreSQL.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

main().then(
  (ok) => process.exit(ok ? 0 : 1),
  (error: unknown) => {
    process.stderr.write(`benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(2);
  },
);
