import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { buildUnderTest, plantNames } from './build.js';
import { compare } from './check.js';
import { Api } from './client.js';
import { Disagreement, Driver } from './driver.js';
import { Faults } from './faults.js';
import { generate } from './generator.js';
import { configurePayments, startLocalStripe } from './stripe.js';
import { SimOpenAi } from './openai.js';
import { CommitCuttingProxy } from './commit-cutting-proxy.js';
import type { Op } from './ops.js';
import { ROOT, TallyProcess, freePort, startDatabase, tallyEnv } from './world.js';

/**
 * `npm run sim -- --seed S [--steps N | --minutes M] [--faults] [--workers K] [--plant NAME]`:
 * the whole service — `tally serve`, K `tally worker`s, a real PostgreSQL — driven by a
 * seeded sequence of operations through its HTTP API and signed webhooks, checked against an
 * independent reference model (sim/model.ts) at quiescent points. Exit 0: the model and
 * Tally agreed throughout; 1: they did not (the seed, the step, the op, both sides and the
 * command that replays it are printed, the op log written).
 */

interface Options {
  seed: number;
  steps: number;
  minutes?: number;
  faults: boolean;
  workers: number;
  plant?: string;
  listPlants?: boolean;
  checkEvery: number;
}

const whole = (name: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError(`${name} is a whole number`);
  return n;
};

async function main(): Promise<void> {
  const program = new Command('sim')
    .description('a seeded simulation of the whole service against a reference model, with faults')
    .option('--seed <n>', 'the seed: the same seed performs the same operations', whole('seed'), 1)
    .option('--steps <n>', 'operations to perform', whole('steps'), 400)
    .option('--minutes <m>', 'run this long instead (a soak), in rounds of --steps', whole('minutes'))
    .option('--faults', 'SIGKILL workers and serve, failpoints, terminated connections, at seeded instants', false)
    .option('--workers <k>', 'standalone tally workers', whole('workers'), 2)
    .option('--check-every <n>', 'a quiescent check every this many operations', whole('check-every'), 100)
    .option('--plant <name>', 'run a build with this known bug planted (see --list-plants): the run must fail')
    .option('--list-plants', 'print the plants, one a line, and exit');
  program.parse();
  const options = program.opts<Options>();
  const plants = await plantNames();
  if (options.listPlants) {
    for (const name of plants) console.log(name);
    return;
  }
  if (options.plant !== undefined && !plants.includes(options.plant))
    throw new InvalidArgumentError(`no plant ${options.plant}: ${plants.join(', ')}`);
  process.exitCode = (await run(options)) ? 0 : 1;
}

async function run(options: Options): Promise<boolean> {
  const replay = `npm run sim -- --seed ${options.seed} --steps ${options.steps}${options.faults ? ' --faults' : ''} --workers ${options.workers}${options.plant ? ` --plant ${options.plant}` : ''}`;
  const logDir = join(ROOT, '.tally', 'sim');
  await mkdir(logDir, { recursive: true });
  const logPath = join(logDir, `seed-${options.seed}${options.plant ? `-${options.plant}` : ''}.jsonl`);
  const bin = await buildUnderTest(options.plant);
  const dataDir = await mkdtemp(join(tmpdir(), 'tally-sim-'));
  const database = await startDatabase(join(dataDir, 'pg'), `tally_sim_${options.seed}`);
  const port = await freePort();
  // with faults, Tally reaches its database through a proxy that can lose a COMMIT's answer
  const proxy = options.faults ? await CommitCuttingProxy.start(database.url) : null;
  const tallyUrl = proxy ? proxy.urlFor(database.url) : database.url;
  const env = { ...tallyEnv(tallyUrl), ...(options.plant ? { TALLY_SIM_PLANT: options.plant } : {}) };
  const serve = new TallyProcess('serve', bin, ['serve', '--port', String(port), '--workers', '0'], env);
  const workers = Array.from(
    { length: options.workers },
    (_, i) => new TallyProcess(`worker-${i + 1}`, bin, ['worker', '--concurrency', '4'], env),
  );
  const api = new Api(() => `http://127.0.0.1:${port}`);
  const stripe = await startLocalStripe();
  const openai = await SimOpenAi.start();
  const driver = new Driver(api, { local: stripe, pool: database.pool, openai });
  const faults = new Faults(options.seed, serve, workers, database.pool, stripe, proxy, openai);

  const started = Date.now();
  let step = 0;
  let checks = 0;
  let performed = 0;
  const progress = setInterval(() => {
    const f = Object.entries(faults.counts)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    process.stderr.write(
      `[sim] seed ${options.seed} · step ${step} · ${performed} ops · ${checks} checks${f ? ` · faults: ${f}` : ''} · ${Math.round((Date.now() - started) / 1000)} s\n`,
    );
  }, 5_000);
  try {
    serve.start();
    await waitForHealth(`http://127.0.0.1:${port}`, serve);
    for (const worker of workers) worker.start();
    await driver.setUp();
    await configurePayments(api, stripe);
    if (options.faults) faults.start();
    const deadline = options.minutes === undefined ? null : started + options.minutes * 60_000;
    for (let round = 0; ; round++) {
      const ops = generate(options.seed + round * 7_919, { steps: options.steps, checkEvery: options.checkEvery }).map((op) =>
        rename(op, round),
      );
      const chains = new Map<string, Promise<void>>();
      let failure: unknown = null;
      for (const [index, op] of ops.entries()) {
        if (failure !== null) throw failure;
        step++;
        if (op.kind === 'check') {
          await Promise.all(chains.values());
          chains.clear();
          if (failure !== null) throw failure;
          const found = await faults.quiet(async () => {
            // the last check of a run also waits out the grants that expire within 30 s, so that
            // their sweeps are compared however fast the run went
            await quiescent(driver, database.pool, index === ops.length - 1 ? 30_000 : 2_000);
            // the model posts what time alone did meanwhile (expiries) before it is compared
            driver.model.apply({ kind: 'check' }, { status: 200 }, Date.now());
            return compare(api, driver.ids, driver.model);
          });
          checks++;
          if (found.length > 0)
            throw new Disagreement(step, op, `the model and Tally disagree at a quiescent point:\n  ${found.join('\n  ')}`);
          if (deadline !== null && Date.now() > deadline) break;
          continue;
        }
        const wallet = 'wallet' in op ? op.wallet : 'all';
        const at = step;
        // a failed op ends the run: its wallet's chain stops, and the loop throws at the next op
        const chain = (chains.get(wallet) ?? Promise.resolve())
          .then(() => (failure === null ? driver.perform(at, op) : undefined))
          .then(() => void performed++)
          .catch((error: unknown) => void (failure ??= error));
        chains.set(wallet, chain);
        // let the chains run: the next op of a wallet queues behind its chain
        await new Promise((resolve) => setImmediate(resolve));
      }
      await Promise.all(chains.values());
      if (failure !== null) throw failure;
      if (deadline === null || Date.now() > deadline) break;
    }
    clearInterval(progress);
    const f = Object.entries(faults.counts)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    console.log(
      `sim: seed ${options.seed}, ${performed} operations, ${checks} quiescent checks, all agreeing${options.faults ? `; faults: ${f} (COMMIT answers lost: ${proxy?.fired.length ?? 0})` : ''} (${Math.round((Date.now() - started) / 1000)} s)`,
    );
    await writeLog(logPath, driver);
    return true;
  } catch (error) {
    clearInterval(progress);
    await writeLog(logPath, driver);
    if (!(error instanceof Disagreement)) throw error;
    console.log(`sim: DISAGREEMENT at step ${error.step} of seed ${options.seed}${options.plant ? ` (plant ${options.plant})` : ''}`);
    console.log(`  op: ${JSON.stringify(error.op, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`);
    console.log(`  ${error.message.split('\n').join('\n  ')}`);
    console.log(`  replay: ${replay}`);
    console.log(`  op log: ${logPath}`);
    return false;
  } finally {
    await faults.stop();
    for (const p of [...workers, serve]) await p.stop();
    await stripe.close();
    await openai.close();
    await proxy?.close();
    await database.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** A later round's names are its own: r1w2, r1j7, … (round 0 keeps w2, j7). */
function rename(op: Op, round: number): Op {
  if (round === 0) return op;
  const renamed: Record<string, unknown> = { ...op };
  for (const key of ['tenant', 'wallet', 'grant', 'job', 'card'] as const)
    if (typeof renamed[key] === 'string') renamed[key] = `r${round}${renamed[key] as string}`;
  // race_submits names its jobs in a list: a later round's are its own too (else they would be taken for round 0's)
  if (Array.isArray(renamed.jobs)) renamed.jobs = (renamed.jobs as string[]).map((job) => `r${round}${job}`);
  return renamed as Op;
}

async function waitForHealth(baseUrl: string, serve: TallyProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!serve.running) throw new Error(`tally serve exited: ${serve.tail()}`);
    const health = await fetch(`${baseUrl}/healthz`).catch(() => null);
    if (health?.status === 200) return;
    if (Date.now() > deadline) throw new Error(`tally serve did not become healthy: ${serve.tail()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every accepted event settled, and every grant past its expiry swept (the duties run at least every 10 s). */
async function quiescent(driver: Driver, pool: import('pg').Pool, horizonMs: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const open = await pool.query<{ n: number }>(`select count(*)::int as n from webhook_events where state in ('pending', 'processing')`);
    const now = Date.now();
    const sweeping = [...driver.ids.grants.values()]
      .map((g) => g.expiresAt)
      .filter((at): at is number => at !== null && at <= now + horizonMs && at + 12_000 > now);
    if (open.rows[0]!.n === 0 && sweeping.length === 0) return;
    if (Date.now() > deadline) throw new Error('no quiescence in 120 s');
    await new Promise((resolve) => setTimeout(resolve, sweeping.length > 0 ? Math.max(...sweeping) + 12_000 - now : 100));
  }
}

async function writeLog(path: string, driver: Driver): Promise<void> {
  const lines = driver.answers.map((a) => JSON.stringify(a, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
  await writeFile(path, lines.join('\n') + '\n');
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(2);
});
