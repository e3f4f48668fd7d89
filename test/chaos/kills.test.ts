import { describe, expect, it } from 'vitest';
import { Random, simulate } from '../../src/simulator/index.js';
import { freshDatabase } from '../support/database.js';
import { Fleet, type FleetProcess } from '../support/fleet.js';
import { waitUntil } from '../support/server.js';
import { cancelJob, chaosSeed, createChaosWorld, expectExactlyOnce, plannedJobs, printSummary, waitForSettled } from '../support/chaos-world.js';

/**
 * Worker processes SIGKILLed at random instants — one at a time, sometimes all at once
 * — and restarted, while a chaotic provider sends a few thousand deliveries for
 * hundreds of jobs. Killed mid-claim, mid-transaction, mid-COMMIT: whatever the instant,
 * every job must come out billed exactly once.
 */
const JOBS = 300;
const WORKERS = 3;
const SEED = chaosSeed();
/** Kills keep coming until the provider is done and at least this many happened. */
const MIN_KILLS = 12;
/** A kill 200–1200 ms after a started worker is available to kill. */
const KILL_GAP_MS = [200, 1200] as const;
/** Two extra copies at most per delivery, a third of events re-emitted under a new id. */
const CHAOS = { maxDuplicates: 2, reemitProbability: 0.3 };
/** Probability that a kill takes every worker down at once. */
const KILL_ALL_PROBABILITY = 0.15;

const db = await freshDatabase();
const fleet = new Fleet(db.url);
const api = await fleet.server({ name: 'api', workers: 0 });
const WORKER_ENV = { TALLY_LEASE_SECONDS: '2' };

describe('workers SIGKILLed at random instants during a chaotic run', () => {
  it(`bills each of ${JOBS} jobs exactly once (seed ${SEED})`, { timeout: 240_000 }, async () => {
    const world = await createChaosWorld(api.url, { tenants: 10 });
    const planned = await plannedJobs(world, JOBS, SEED);
    const random = new Random(SEED ^ 0x6b111);

    const slots: FleetProcess[] = Array.from({ length: WORKERS }, (_, i) => fleet.worker({ name: `worker-${i}`, concurrency: 2, env: WORKER_ENV }));
    let killed = 0;
    let restarts = 0;
    const exits: (number | string)[] = [];
    let providerDone = false;

    const killOne = async (index: number) => {
      exits.push(await fleet.kill(slots[index]!));
      killed++;
      slots[index] = fleet.worker({ name: `worker-${index}`, concurrency: 2, env: WORKER_ENV });
      restarts++;
    };
    // A worker that failed to start (its migration timed out on a loaded machine) is
    // started again; one that died after starting is a crash, and fails the test.
    const reviveFailedStarts = () =>
      slots.forEach((p, i) => {
        if (!fleet.diedUnasked(p)) return;
        slots[i] = fleet.worker({ name: `worker-${i}`, concurrency: 2, env: WORKER_ENV });
        restarts++;
      });
    // The chaos: timers pick the instants, the seed picks the victims. Only a worker
    // that has started (migrated, claiming) is a victim, so every kill lands on one
    // that may hold claims and open transactions, never on one still booting.
    const monkey = (async () => {
      while (!providerDone || killed < MIN_KILLS) {
        await waitUntil(() => slots.some((p) => fleet.workerStarted(p)), 60_000);
        await new Promise((resolve) => setTimeout(resolve, random.int(KILL_GAP_MS[0], KILL_GAP_MS[1])));
        reviveFailedStarts();
        const candidates = slots.flatMap((p, i) => (fleet.workerStarted(p) ? [i] : []));
        if (candidates.length === 0) continue;
        const victims = random.chance(KILL_ALL_PROBABILITY) ? candidates : [random.pick(candidates)];
        await Promise.all(victims.map(killOne));
      }
    })();

    const started = Date.now();
    const report = await simulate(planned, {
      baseUrl: api.url,
      provider: world.provider,
      secret: world.secret,
      seed: SEED,
      concurrency: 32,
      chaos: CHAOS,
      cancelJob: cancelJob(world),
    }).finally(() => (providerDone = true));
    await monkey;
    reviveFailedStarts();
    const simulatedMs = Date.now() - started;
    expect(report.unexpected.map((r) => `${r.status} ${r.answer} ${r.delivery.eventId}`), 'unexpected answers').toEqual([]);
    expect(exits.every((how) => how === 'SIGKILL')).toBe(true);

    // The last generation of workers, never killed, finishes what the others left.
    await waitForSettled(db.pool, planned.map((j) => j.id), 120_000);
    expect(fleet.crashes, 'workers that died unasked').toEqual([]);
    const billing = await expectExactlyOnce(db.pool, world, planned);

    // A killed worker's lapsed claim is continued, not counted (issue 11.5): attempts are real tries.
    const claims = await db.pool.query<{ attempts: number }>(
      `select coalesce(sum(attempts), 0)::int as attempts
       from webhook_events where provider = $1`,
      [world.provider],
    );
    printSummary(`kills (seed ${SEED})`, {
      jobs: JOBS,
      deliveries: report.deliveries,
      accepted: report.accepted,
      duplicates: report.duplicatesAbsorbed,
      forgeries_refused: report.forgeriesRefused,
      processes_killed: killed,
      restarts,
      failed_starts: fleet.startupFailures.length,
      attempts: claims.rows[0]!.attempts,
      run_seconds: (simulatedMs / 1000).toFixed(1),
      billed: billing.billed,
      money_lost: billing.lost,
      money_duplicated: billing.duplicated,
    });
    expect(killed).toBeGreaterThanOrEqual(MIN_KILLS);
  });
});
