import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { loadBackoff, loadSimulator } from './app.js';
import { Cleanup } from './cleanup.js';
import { FetchRecorder } from './fetch-recorder.js';
import { Formation } from './formation.js';
import { KILL_MODES, type KillMode } from './kill.js';
import { SteadyLoad } from './load.js';
import { prepareTallyDatabase, TALLY_ROLE } from './node-db.js';
import { preflight, PreflightFailure } from './preflight.js';
import { ProbeWatch } from './probe-watch.js';
import { Progress } from './progress.js';
import { runRound, type RoundFigures } from './round.js';
import { doubledCount, formatRound, formatSummary, lostCount } from './summary.js';
import { startFleet } from './tally-fleet.js';
import { tallyDatabaseUrl } from './tally-url.js';
import { createWorld } from './world.js';

/**
 * `npm run drill:failover [-- options]`: a failover drill with a real failover manager.
 * A pg_auto_failover monitor and two nodes (primary + synchronous standby) on this
 * machine, Tally's serve and two workers on the formation's multi-host URL, a steady
 * load of jobs with duplicate webhooks, then the primary SIGKILLed (its postmaster, and
 * by default its pg_autoctl too: kill.ts) and pg_auto_failover left to promote the
 * standby. Every acknowledged effect is then looked for on the new primary, and the old
 * primary brought back as a standby. See docs/operations/failover-drill.md.
 */

const say = (line: string) => process.stderr.write(`${line}\n`);
const positive = (what: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`${what} must be a positive number`);
  return n;
};
const count = (what: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError(`${what} must be a whole number, 1 or more`);
  return n;
};

const program = new Command('drill:failover')
  .description('a failover drill: pg_auto_failover formation, Tally under load, the primary SIGKILLed, everything acknowledged checked')
  .option(
    '--rounds <n>',
    'failovers in a row; each kills the primary of the moment (2: failover, then failback to the first node)',
    count('--rounds'),
    1,
  )
  .option('--failback', 'the same as --rounds 2: the old primary rejoins as a standby, then a second failover brings the primary back')
  .option('--rate <jobs>', 'jobs started per second (each with its webhook deliveries and duplicates)', positive('--rate'), 5)
  .option('--warmup <seconds>', 'load before the kill', positive('--warmup'), 8)
  .option('--after <seconds>', 'load after the kill', positive('--after'), 15)
  .addOption(
    new Option(
      '--kill <what>',
      'node: its pg_autoctl and postmaster, as if its machine died; postmaster: the postmaster alone (its pg_autoctl may restart it in place)',
    )
      .choices(KILL_MODES)
      .default('node'),
  )
  .option('--tenants <n>', 'tenants, each with a wallet', count('--tenants'), 4)
  .option('--seed <n>', 'the simulator seed (scenarios and duplicates)', count('--seed'))
  .option('--log-dir <dir>', 'keep every log (Tally, pg_autoctl, the monitor events) and the figures as JSON there')
  .parse();

interface Options {
  rounds: number;
  failback?: boolean;
  rate: number;
  warmup: number;
  after: number;
  kill: KillMode;
  tenants: number;
  seed?: number;
  logDir?: string;
}

async function main(options: Options): Promise<boolean> {
  const tools = preflight();
  const cleanup = new Cleanup();
  cleanup.onSignals(say);
  try {
    const root = await mkdtemp(join(tmpdir(), 'tally-drill-'));
    cleanup.add(`remove ${root}`, () => rm(root, { recursive: true, force: true }));
    // mkdtemp makes it 0700; the postgres user owns it, so pg_autoctl can create its nodes in it.
    await chmod(root, 0o755);
    await chown(root, tools.postgresUser.uid, tools.postgresUser.gid);
    const logDir = resolve(options.logDir ?? join(root, 'logs'));
    await mkdir(logDir, { recursive: true });
    say(`drill: PostgreSQL ${tools.pgVersion} (${tools.pgBindir}), ${tools.pgAutoctl}; working in ${root}; logs in ${logDir}`);

    const formation = await Formation.create(tools, root, logDir, cleanup, say);
    const primary = await formation.primary();
    const session = await prepareTallyDatabase(primary.port);
    say(
      `formation: ${primary.name} primary; Tally's sessions run with synchronous_commit = ${session.synchronousCommit}, synchronous_standby_names = ${session.standbyNames}`,
    );
    if (session.synchronousCommit !== 'on' || session.standbyNames === '')
      throw new Error('replication is not synchronous: the drill would prove nothing');
    say(`pg_autoctl get formation settings:\n${(await formation.settings()).trimEnd()}`);
    const formationUri = await formation.formationUri();
    const databaseUrl = tallyDatabaseUrl(formationUri, TALLY_ROLE);
    say(`pg_autoctl show uri --formation default: ${formationUri}\nDATABASE_URL given to Tally:            ${databaseUrl}`);

    const fleet = await startFleet(databaseUrl, root, logDir, cleanup);
    say(`tally: serve on ${fleet.baseUrl} (no in-process worker), worker-1 and worker-2; migrations applied`);
    const recorder = new FetchRecorder();
    recorder.install();
    // A load balancer's readiness probe, and a Prometheus scrape every second.
    const health = new ProbeWatch(`${fleet.baseUrl}/healthz`, 100);
    const scrape = new ProbeWatch(`${fleet.baseUrl}/metrics`, 1_000);
    health.start();
    scrape.start();
    cleanup.add('stop watching /healthz and /metrics', () => (health.stop(), scrape.stop()));
    const world = await createWorld(fleet.baseUrl, fleet.adminToken, options.tenants);
    const seed = options.seed ?? 1 + Math.floor(Math.random() * 1_000_000);
    const load = new SteadyLoad(world, await loadSimulator(), await loadBackoff(), {
      jobsPerSecond: options.rate,
      creditEveryMs: 250,
      seed,
    });
    const progress = new Progress(formation.monitor, load, recorder, health);
    cleanup.add('stop the progress line', () => progress.stop());
    say(
      `world: provider ${world.provider}, model ${world.model}, ${world.tenants.length} funded wallets; seed ${seed}; ${options.rate} jobs/s`,
    );

    const rounds: RoundFigures[] = [];
    const roundCount = options.failback ? Math.max(2, options.rounds) : options.rounds;
    for (let round = 1; round <= roundCount; round++) {
      const figures = await runRound(
        round,
        { formation, fleet, world, load, recorder, health, scrape, progress, say },
        { warmupSeconds: options.warmup, afterSeconds: options.after, kill: options.kill },
      );
      rounds.push(figures);
      process.stdout.write(`${formatRound(figures)}\n`);
    }
    const command = `npm run drill:failover${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
    process.stdout.write(formatSummary(rounds, command));
    await writeFile(join(logDir, 'monitor-events.txt'), await formation.showEvents(100)).catch(() => {});
    await writeFile(
      join(logDir, 'figures.json'),
      JSON.stringify(rounds, (_, v) => (typeof v === 'bigint' ? v.toString() : v), 2),
    );
    return rounds.every((r) => r.ok && lostCount(r) === 0 && doubledCount(r) === 0);
  } finally {
    say('cleaning up: stopping Tally, pg_autoctl and PostgreSQL, removing the temp dir');
    await cleanup.run(say);
  }
}

main(program.opts<Options>()).then(
  (ok) => process.exit(ok ? 0 : 1),
  (error: Error) => {
    say(error instanceof PreflightFailure ? `drill: ${error.message}` : `drill failed: ${error.stack ?? error.message}`);
    process.exit(error instanceof PreflightFailure ? 2 : 1);
  },
);
