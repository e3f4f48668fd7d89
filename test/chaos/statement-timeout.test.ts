import { describe, expect, it } from 'vitest';
import { MIGRATION_LOCK_ID } from '../../src/db/migrate.js';
import { Random, send, type Delivery, type PlannedJob } from '../../src/simulator/index.js';
import { freshDatabase } from '../support/database.js';
import { Fleet } from '../support/fleet.js';
import { waitUntil } from '../support/server.js';
import { completedJob, createChaosWorld, effectsOf, expectExactlyOnce, printSummary, storedEvent, waitForSettled } from '../support/chaos-world.js';

/**
 * A settlement that cannot get its job's row lock within the statement timeout: the
 * worker's statement is cancelled (57014), the event goes back with backoff and is
 * tried again, and it settles once the lock is gone — one capture, never two, and no
 * other job waits meanwhile.
 */
const LEASE_SECONDS = 3; // statement_timeout = lease / 3 = 1 s
const db = await freshDatabase();
const fleet = new Fleet(db.url);
const api = await fleet.server({ name: 'api', workers: 0 });
const world = await createChaosWorld(api.url, { tenants: 1 });
const random = new Random(5701);

async function accepted(delivery: Delivery): Promise<void> {
  const result = await send(api.url, world.provider, delivery);
  expect({ status: result.status, answer: result.answer }).toEqual({ status: 200, answer: 'accepted' });
}

describe('a statement timeout inside the settle transaction', () => {
  it('retries with backoff while the job row is locked, then settles exactly once', async () => {
    const blocked = await completedJob(world, random);
    const free = await completedJob(world, random);
    const planned: PlannedJob[] = [blocked.job, free.job];
    await accepted(blocked.delivery);

    // Somebody holds the job's row lock far longer than a worker's statement may wait.
    const holder = await db.pool.connect();
    await holder.query('begin');
    await holder.query('select id from jobs where id = $1 for update', [blocked.job.id]);
    const worker = fleet.worker({ name: 'worker', concurrency: 2, env: { TALLY_LEASE_SECONDS: String(LEASE_SECONDS) } });

    // Each failed attempt is put back: pending, with the timeout as its last error and
    // a run_after in the future (the backoff), attempts counting up.
    const retries = new Map<number, { delayMs: number; error: string }>();
    try {
      await waitUntil(async () => {
        const { rows } = await db.pool.query<{ state: string; attempts: number; last_error: string | null; delay_ms: number }>(
          `select state, attempts, last_error, extract(epoch from run_after - now()) * 1000 as delay_ms
           from webhook_events where provider = $1 and event_key = $2`,
          [world.provider, blocked.delivery.eventId],
        );
        const row = rows[0]!;
        if (row.state === 'pending' && row.last_error && !retries.has(row.attempts)) retries.set(row.attempts, { delayMs: Number(row.delay_ms), error: row.last_error });
        return retries.size >= 2;
      }, 30_000, 20);
      // Another job is not held back by the blocked one.
      await accepted(free.delivery);
      await waitForSettled(db.pool, [free.job.id], 20_000);
      expect((await effectsOf(db.pool, blocked.job.id)).settlements).toEqual([]);
    } finally {
      await holder.query('commit');
      holder.release();
    }
    for (const { error } of retries.values()) expect(error).toMatch(/statement timeout/i);

    await waitForSettled(db.pool, [blocked.job.id], 30_000);
    const effects = await effectsOf(db.pool, blocked.job.id);
    expect(effects.settlements.map((s) => s.charge_type)).toEqual(['capture']);
    const event = await storedEvent(db.pool, world.provider, blocked.delivery);
    expect(event).toMatchObject({ state: 'applied', settlement_key: effects.settlements[0]!.settlement_key });
    expect(event!.attempts).toBeGreaterThanOrEqual(3);
    expect(await fleet.stop(worker)).toBe(0);
    expect(fleet.crashes).toEqual([]);

    const billing = await expectExactlyOnce(db.pool, world, planned);
    printSummary('statement-timeout', {
      statement_timeout_ms: (LEASE_SECONDS * 1000) / 3,
      timed_out_attempts: retries.size,
      backoff_seen_ms: [...retries.values()].map((r) => Math.max(0, Math.round(r.delayMs))).join('/'),
      attempts_to_settle: event!.attempts,
      settlements: effects.settlements.length,
      money_lost: billing.lost,
      money_duplicated: billing.duplicated,
    });
  });

  it('does not cut short a migration: a worker starting while another process migrates waits for it', async () => {
    // Another process is migrating: it holds the migration lock for longer than the
    // starting worker's statement timeout (lease / 3), which is sized for settlements.
    const migrator = await db.pool.connect();
    await migrator.query('select pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_ID]);
    const worker = fleet.worker({ name: 'worker(starting)', concurrency: 1, env: { TALLY_LEASE_SECONDS: String(LEASE_SECONDS) } });
    try {
      // Its wait on the lock has lasted well past its statement timeout.
      await waitUntil(async () => {
        const { rows } = await db.pool.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity
           where datname = current_database() and application_name = 'tally-worker' and wait_event_type = 'Lock'
             and now() - query_start > make_interval(secs => $1)`,
          [(LEASE_SECONDS / 3) * 2],
        );
        return rows[0]!.n >= 1 || !fleet.alive(worker);
      }, 30_000);
    } finally {
      await migrator.query('select pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_ID]);
      migrator.release();
    }
    await waitUntil(() => fleet.workerStarted(worker) || !fleet.alive(worker), 30_000);
    expect(fleet.startupFailures, 'workers that failed to start').toEqual([]);
    expect(fleet.workerStarted(worker)).toBe(true);
    expect(await fleet.stop(worker)).toBe(0);
  });
});
