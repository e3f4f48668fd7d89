import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Random, send, type Delivery, type PlannedJob } from '../../src/simulator/index.js';
import { CommitCuttingProxy, type CutMode } from '../../sim/commit-cutting-proxy.js';
import { freshDatabase } from '../support/database.js';
import { Fleet, type FleetProcess } from '../support/fleet.js';
import { lockWaiters } from '../support/gate.js';
import { waitUntil } from '../support/server.js';
import {
  completedJob,
  createChaosWorld,
  effectsOf,
  expectExactlyOnce,
  printSummary,
  reemission,
  storedEvent,
  waitForSettled,
} from '../support/chaos-world.js';

/**
 * A worker process reaches PostgreSQL through a proxy that cuts the connection at the
 * settle transaction's COMMIT (docs/ARCHITECTURE.md "The settle transaction": the outcome is unknown).
 * The worker must find out by reading its own write back — or, when even that is
 * impossible, leave the event for a later claim — and the job gets exactly one effect.
 */
const db = await freshDatabase();
const proxy = await CommitCuttingProxy.start(db.url);
afterAll(() => proxy.close());
const direct = new Fleet(db.url);
const viaProxy = new Fleet(proxy.urlFor(db.url));
const api = await direct.server({ name: 'api', workers: 0 });
const world = await createChaosWorld(api.url, { tenants: 1 });
const random = new Random(7117);
const planned: PlannedJob[] = [];

/** The proxied worker of the running test; stopped by finish(), killed after a test that failed first. */
let current: FleetProcess | null = null;

afterEach(async () => {
  // A worker left running by a failed test would go on settling (and committing) through
  // the proxy during the next test: its failure would become the next test's.
  if (current && viaProxy.alive(current)) await viaProxy.kill(current);
  current = null;
  proxy.reset();
  expect([...direct.crashes, ...viaProxy.crashes], 'processes that died unasked').toEqual([]);
});

/**
 * The COMMIT each test cuts: that of the transaction that inserts the job's settlement.
 * A worker commits other transactions meanwhile — above all, an idle loop's walk for
 * ready events (TALLY_SETTLE_CLAIM=locked) is a transaction of its own at every poll,
 * with nothing to settle — and cutting "the next COMMIT" cut one of those whenever the
 * delivery took longer than a poll to reach the worker (a loaded machine): the
 * settlement then committed untouched and the test waited for what never came.
 */
const SETTLING = /insert into settlements/i;

/**
 * A locked first attempt waits out no lease, so the default minute costs these tests
 * nothing, while its third (20 s) is how long the worker's read-back may wait on a held
 * COMMIT and how long PostgreSQL lets the held transaction sit idle before ending it
 * itself. Under a lease of 6 s that was 2 s: less than a loaded machine may take to see
 * the read-back waiting and release the COMMIT.
 */
const LOCKED_LEASE_SECONDS = 60;

/**
 * A worker behind the proxy, started (migrations and their COMMITs done) before the
 * proxy is armed. Scheduled reconciliation is off. The lease also sets the worker's
 * statement and idle-in-transaction timeouts (a third of it, cli/worker-runtime.ts):
 * a read-back waiting for an in-doubt COMMIT waits that long at most.
 */
async function proxiedWorker(leaseSeconds = LOCKED_LEASE_SECONDS, claim: 'locked' | 'leased' = 'locked'): Promise<FleetProcess> {
  const worker = viaProxy.worker({
    name: 'worker(via proxy)',
    concurrency: 1,
    env: { TALLY_LEASE_SECONDS: String(leaseSeconds), TALLY_RECONCILE_INTERVAL_SECONDS: '0', TALLY_SETTLE_CLAIM: claim },
  });
  current = worker;
  await waitUntil(() => viaProxy.workerStarted(worker), 30_000);
  return worker;
}

async function accepted(delivery: Delivery): Promise<void> {
  const result = await send(api.url, world.provider, delivery);
  expect({ status: result.status, answer: result.answer }).toEqual({ status: 200, answer: 'accepted' });
}

async function newJob() {
  const made = await completedJob(world, random);
  planned.push(made.job);
  return made;
}

async function expectOneCapture(jobId: string) {
  const effects = await effectsOf(db.pool, jobId);
  expect(effects.state).toBe('captured');
  expect(effects.settlements.map((s) => s.charge_type)).toEqual(['capture']);
  return effects.settlements[0]!.settlement_key;
}

async function finish(worker: FleetProcess, scenario: string, cut: CutMode) {
  expect(await viaProxy.stop(worker)).toBe(0);
  const billing = await expectExactlyOnce(db.pool, world, planned);
  printSummary(`commit-cut ${scenario}`, {
    cut_commits: proxy.fired.length,
    cut_mode: cut,
    settlements: 1,
    money_lost: billing.lost,
    money_duplicated: billing.duplicated,
  });
}

describe('a worker whose connection is cut at COMMIT', () => {
  it('cut after COMMIT is sent (committed): the worker reads its settlement back and keeps it; one capture', async () => {
    const worker = await proxiedWorker();
    const { job, delivery } = await newJob();
    proxy.arm('after', { ran: SETTLING });
    await accepted(delivery);
    await waitForSettled(db.pool, [job.id], 30_000);
    expect(proxy.fired.map((c) => c.mode)).toEqual(['after']);
    const key = await expectOneCapture(job.id);
    // Resolved inside that one claim: no second claim, no retry recorded.
    expect(await storedEvent(db.pool, world.provider, delivery)).toMatchObject({ state: 'applied', attempts: 1, settlement_key: key });
    await finish(worker, 'after COMMIT', 'after');
  });

  it('cut before COMMIT arrives (rolled back): the read-back finds nothing and the worker settles again; one capture', async () => {
    const worker = await proxiedWorker();
    const { job, delivery } = await newJob();
    proxy.arm('before', { ran: SETTLING });
    await accepted(delivery);
    await waitForSettled(db.pool, [job.id], 30_000);
    expect(proxy.fired.map((c) => c.mode)).toEqual(['before']);
    const key = await expectOneCapture(job.id);
    expect(await storedEvent(db.pool, world.provider, delivery)).toMatchObject({ state: 'applied', attempts: 1, settlement_key: key });
    await finish(worker, 'before COMMIT', 'before');
  });

  it('the COMMIT still in flight while the worker looks: its read-back waits for the outcome; one capture', async () => {
    const worker = await proxiedWorker();
    const { job, delivery } = await newJob();
    proxy.arm('after', { holdCommit: true, ran: SETTLING });
    await accepted(delivery);
    // The worker has lost its connection and now waits on the in-doubt transaction's
    // job row lock; only then does PostgreSQL receive the COMMIT.
    await waitUntil(async () => proxy.fired.length === 1 && (await lockWaiters(db.pool)) >= 1, 30_000, 10);
    proxy.releaseCommit();
    await waitForSettled(db.pool, [job.id], 30_000);
    const key = await expectOneCapture(job.id);
    expect(await storedEvent(db.pool, world.provider, delivery)).toMatchObject({ state: 'applied', attempts: 1, settlement_key: key });
    await finish(worker, 'COMMIT held in flight', 'after');
  });

  // How a worker takes an event's first attempt (TALLY_SETTLE_CLAIM) decides what a cut
  // leaves behind. Leased: a claim that expires (leases of 3 s). Locked (the default): a row
  // lock that died with the transaction, nothing to expire (leases of a minute: a worker
  // that had to wait for one would not settle within the 30 s below).
  const unreachable = [
    {
      claim: 'leased' as const,
      leaseSeconds: 3,
      log: 'could not record the event outcome',
      rolledBack: { state: 'processing', attempts: 1 },
    },
    {
      claim: 'locked' as const,
      leaseSeconds: LOCKED_LEASE_SECONDS,
      log: 'settling ready events failed on the connection',
      rolledBack: { state: 'pending', attempts: 0, lease_until: null },
    },
  ];

  it.each(unreachable)(
    'cut before COMMIT and the database unreachable ($claim first attempt): nothing written, the outcome unknown to the worker; settled once when it is back',
    async ({ claim, leaseSeconds, log, rolledBack }) => {
      const worker = await proxiedWorker(leaseSeconds, claim);
      const { job, delivery } = await newJob();
      proxy.arm('before', { thenUnreachable: true, ran: SETTLING });
      await accepted(delivery);
      // Neither the read-back nor recording a retry can reach the database.
      await waitUntil(() => worker.output().includes(log), 30_000);
      expect(await storedEvent(db.pool, world.provider, delivery)).toMatchObject(rolledBack);
      expect((await effectsOf(db.pool, job.id)).settlements).toEqual([]);
      proxy.reachable();
      await waitForSettled(db.pool, [job.id], 30_000);
      const key = await expectOneCapture(job.id);
      expect(await storedEvent(db.pool, world.provider, delivery)).toMatchObject({ state: 'applied', attempts: 1, settlement_key: key });
      await finish(worker, `before COMMIT, database unreachable, ${claim}`, 'before');
    },
  );

  it.each(unreachable)(
    'cut after COMMIT and the database unreachable ($claim first attempt): committed though the worker never learnt it; a re-emission finds the key; one capture',
    async ({ claim, leaseSeconds, log }) => {
      const worker = await proxiedWorker(leaseSeconds, claim);
      const { job, delivery } = await newJob();
      proxy.arm('after', { thenUnreachable: true, ran: SETTLING });
      await accepted(delivery);
      await waitUntil(() => worker.output().includes(log), 30_000);
      const key = await expectOneCapture(job.id);
      expect(await storedEvent(db.pool, world.provider, delivery)).toMatchObject({ state: 'applied', attempts: 1, settlement_key: key });
      proxy.reachable();
      // The provider sends the completion again under a new id: settled against the key.
      const again = reemission(world, job, random);
      await accepted(again);
      await waitForSettled(db.pool, [job.id], 30_000);
      expect(await storedEvent(db.pool, world.provider, again)).toMatchObject({ state: 'no_effect', settlement_key: key });
      expect(await expectOneCapture(job.id)).toBe(key);
      await finish(worker, `after COMMIT, database unreachable, ${claim}`, 'after');
    },
  );
});
