import { afterEach, describe, expect, it } from 'vitest';
import { Random, send, type Delivery, type PlannedJob } from '../../src/simulator/index.js';
import { freshDatabase } from '../support/database.js';
import { Fleet } from '../support/fleet.js';
import { jobDeliveries } from '../support/jobs.js';
import { completedJob, createChaosWorld, effectsOf, expectExactlyOnce, printSummary, reemission, storedEvent, waitForSettled } from '../support/chaos-world.js';

/**
 * Each named crash point (src/failpoints.ts) in a real process: TALLY_FAILPOINTS makes
 * it SIGKILL itself there, and the next worker — or the provider's retry against a
 * restarted server — must finish the work with exactly one financial effect.
 */
const db = await freshDatabase();
const fleet = new Fleet(db.url);
const api = await fleet.server({ name: 'api' });
const world = await createChaosWorld(api.url, { tenants: 1 });
/** Short leases, so that a dead worker's claim expires quickly (statement timeout = lease / 3). */
const LEASE = { TALLY_LEASE_SECONDS: '2' };
/** First attempts claimed with a lease too (TALLY_SETTLE_CLAIM): the crashes below are a lease's. */
const LEASED = { ...LEASE, TALLY_SETTLE_CLAIM: 'leased' };
const random = new Random(4242);
const planned: PlannedJob[] = [];

afterEach(() => {
  expect(fleet.crashes, 'processes that died unasked').toEqual([]);
});

async function newJob() {
  const made = await completedJob(world, random);
  planned.push(made.job);
  return made;
}

async function deliver(url: string, delivery: Delivery, expected: 'accepted' | 'already_accepted') {
  const result = await send(url, world.provider, delivery);
  expect({ status: result.status, answer: result.answer }).toEqual({ status: 200, answer: expected });
  return result;
}

const eventOf = async (delivery: Delivery) => (await storedEvent(db.pool, world.provider, delivery))!;
const effects = (jobId: string) => effectsOf(db.pool, jobId);

describe('failpoints: a process SIGKILLed at a named point, and the next one finishing the work', () => {
  it('settle.before_commit: nothing is committed; the next worker settles once', async () => {
    const { job, delivery } = await newJob();
    await deliver(api.url, delivery, 'accepted');

    const doomed = fleet.worker({ name: 'worker(settle.before_commit)', concurrency: 1, expectExit: true, env: { ...LEASED, TALLY_FAILPOINTS: 'settle.before_commit' } });
    expect(await fleet.exitOf(doomed)).toBe('SIGKILL');
    // It claimed the event and died inside the settle transaction: the claim stands, nothing else.
    expect(await eventOf(delivery)).toMatchObject({ state: 'processing', attempts: 1, processed_at: null });
    expect(await effects(job.id)).toEqual({ state: 'reserved', settlements: [], entries: [] });

    const next = fleet.worker({ name: 'worker', concurrency: 1, env: LEASE });
    await waitForSettled(db.pool, [job.id], 30_000);
    const settledEffects = await effects(job.id);
    expect(settledEffects.state).toBe('captured');
    expect(settledEffects.settlements.map((s) => s.charge_type)).toEqual(['capture']);
    // A dead worker's lapsed claim is not an attempt (issue 11.5): the next one continues it.
    expect(await eventOf(delivery)).toMatchObject({ state: 'applied', attempts: 1, settlement_key: settledEffects.settlements[0]!.settlement_key });
    expect(await fleet.stop(next)).toBe(0);

    const billing = await expectExactlyOnce(db.pool, world, planned);
    printSummary('failpoint settle.before_commit', { processes_killed: 1, restarts: 1, deliveries: 1, settlements: settledEffects.settlements.length, money_lost: billing.lost, money_duplicated: billing.duplicated });
  });

  it('worker.after_commit: the settlement is committed; the next worker finds it settled and adds none', async () => {
    const { job, delivery } = await newJob();
    await deliver(api.url, delivery, 'accepted');

    const doomed = fleet.worker({ name: 'worker(worker.after_commit)', concurrency: 1, expectExit: true, env: { ...LEASE, TALLY_FAILPOINTS: 'worker.after_commit' } });
    expect(await fleet.exitOf(doomed)).toBe('SIGKILL');
    // It died after COMMIT: the capture and the event's outcome are both there.
    const committed = await effects(job.id);
    expect(committed.state).toBe('captured');
    expect(committed.settlements.map((s) => s.charge_type)).toEqual(['capture']);
    const key = committed.settlements[0]!.settlement_key;
    expect(await eventOf(delivery)).toMatchObject({ state: 'applied', attempts: 1, settlement_key: key });

    // The provider, which never heard back from us about settling, sends the same
    // delivery again and then re-emits the completion under a new id.
    const next = fleet.worker({ name: 'worker', concurrency: 1, env: LEASE });
    await deliver(api.url, delivery, 'already_accepted');
    const reemitted = reemission(world, job, random);
    await deliver(api.url, reemitted, 'accepted');
    await waitForSettled(db.pool, [job.id], 30_000);
    expect(await eventOf(reemitted)).toMatchObject({ state: 'no_effect', settlement_key: key });
    expect(await effects(job.id)).toEqual(committed);
    expect(await fleet.stop(next)).toBe(0);

    const billing = await expectExactlyOnce(db.pool, world, planned);
    printSummary('failpoint worker.after_commit', { processes_killed: 1, restarts: 1, deliveries: 3, settlements: committed.settlements.length, money_lost: billing.lost, money_duplicated: billing.duplicated });
  });

  it('worker.after_claim: the claim expires after its lease, and another worker settles once', async () => {
    const { job, delivery } = await newJob();
    await deliver(api.url, delivery, 'accepted');

    const doomed = fleet.worker({ name: 'worker(worker.after_claim)', concurrency: 1, expectExit: true, env: { ...LEASED, TALLY_FAILPOINTS: 'worker.after_claim' } });
    expect(await fleet.exitOf(doomed)).toBe('SIGKILL');
    const claimed = await eventOf(delivery);
    expect(claimed).toMatchObject({ state: 'processing', attempts: 1, processed_at: null });
    expect(claimed.lease_until).toBeInstanceOf(Date);
    expect(await effects(job.id)).toEqual({ state: 'reserved', settlements: [], entries: [] });

    // Started at once: it cannot take the event before the dead worker's lease ends.
    const next = fleet.worker({ name: 'worker', concurrency: 1, env: LEASE });
    await waitForSettled(db.pool, [job.id], 30_000);
    const settled = await eventOf(delivery);
    expect(settled).toMatchObject({ state: 'applied', attempts: 1 });
    expect(settled.processed_at!.getTime()).toBeGreaterThanOrEqual(claimed.lease_until!.getTime());
    const settledEffects = await effects(job.id);
    expect(settledEffects.settlements.map((s) => s.charge_type)).toEqual(['capture']);
    expect(await fleet.stop(next)).toBe(0);

    const billing = await expectExactlyOnce(db.pool, world, planned);
    printSummary('failpoint worker.after_claim', { processes_killed: 1, restarts: 1, deliveries: 1, settlements: settledEffects.settlements.length, money_lost: billing.lost, money_duplicated: billing.duplicated });
  });

  it.each(['worker.after_claim', 'settle.before_commit'])(
    '%s on a first attempt taken by a row lock (the default): nothing was written, no lease to wait for; the next worker settles once',
    async (point) => {
      const { job, delivery } = await newJob();
      await deliver(api.url, delivery, 'accepted');
      // Leases of a minute: a next worker that had to wait for one would not settle within the 30 s below.
      const minuteLease = { TALLY_LEASE_SECONDS: '60' };
      const doomed = fleet.worker({ name: `worker(${point})`, concurrency: 1, expectExit: true, env: { ...minuteLease, TALLY_FAILPOINTS: point } });
      expect(await fleet.exitOf(doomed)).toBe('SIGKILL');
      // The row lock died with its transaction: the event is as intake left it.
      expect(await eventOf(delivery)).toMatchObject({ state: 'pending', attempts: 0, lease_until: null, processed_at: null });
      expect(await effects(job.id)).toEqual({ state: 'reserved', settlements: [], entries: [] });

      const next = fleet.worker({ name: 'worker', concurrency: 1, env: minuteLease });
      await waitForSettled(db.pool, [job.id], 30_000);
      const settledEffects = await effects(job.id);
      expect(settledEffects.settlements.map((s) => s.charge_type)).toEqual(['capture']);
      // The killed transaction was no attempt: the one that settled is the first.
      expect(await eventOf(delivery)).toMatchObject({ state: 'applied', attempts: 1, lease_until: null, settlement_key: settledEffects.settlements[0]!.settlement_key });
      expect(await fleet.stop(next)).toBe(0);

      const billing = await expectExactlyOnce(db.pool, world, planned);
      printSummary(`failpoint ${point}, locked first attempt`, { processes_killed: 1, restarts: 1, deliveries: 1, settlements: settledEffects.settlements.length, money_lost: billing.lost, money_duplicated: billing.duplicated });
    },
  );

  it('intake.after_commit: the server dies before answering; the retry gets already_accepted from a restarted server; settled once', async () => {
    const { job, delivery } = await newJob();
    const doomed = await fleet.server({ name: 'server(intake.after_commit)', expectExit: true, env: { TALLY_FAILPOINTS: 'intake.after_commit' } });

    // The provider sends, gets no answer (the connection dies), and retries like a
    // provider does — against the same address, where a new server starts meanwhile.
    const sending = send(doomed.url, world.provider, delivery);
    expect(await fleet.exitOf(doomed)).toBe('SIGKILL');
    const stored = await eventOf(delivery);
    expect(stored).toMatchObject({ state: 'pending', attempts: 0 });
    const restarted = await fleet.server({ name: 'server', port: doomed.port });
    const result = await sending;
    expect({ status: result.status, answer: result.answer }).toEqual({ status: 200, answer: 'already_accepted' });
    expect(result.tries).toBeGreaterThanOrEqual(2);
    const deliveries = await jobDeliveries(db.pool, job.id, delivery.eventId);
    expect(deliveries.map((d) => [d.provider, d.outcome])).toEqual([[world.provider, 'accepted'], [world.provider, 'already_accepted']]);

    const worker = fleet.worker({ name: 'worker', concurrency: 1, env: LEASE });
    await waitForSettled(db.pool, [job.id], 30_000);
    const settledEffects = await effects(job.id);
    expect(settledEffects.settlements.map((s) => s.charge_type)).toEqual(['capture']);
    expect(await eventOf(delivery)).toMatchObject({ state: 'applied', attempts: 1 });
    expect(await fleet.stop(worker)).toBe(0);
    expect(await fleet.stop(restarted)).toBe(0);

    const billing = await expectExactlyOnce(db.pool, world, planned);
    printSummary('failpoint intake.after_commit', { processes_killed: 1, restarts: 1, deliveries: 1, provider_tries: result.tries, settlements: settledEffects.settlements.length, money_lost: billing.lost, money_duplicated: billing.duplicated });
  });
});
