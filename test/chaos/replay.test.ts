import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/db/pool.js';
import { EVENTS_CHANNEL } from '../../src/queue/index.js';
import { simulate } from '../../src/simulator/index.js';
import { deliver, signDelivery } from '../support/client.js';
import { freshDatabase } from '../support/database.js';
import { Fleet } from '../support/fleet.js';
import { mapConcurrent } from '../support/refusal.js';
import { cancelJob, chaosSeed, createChaosWorld, expectExactlyOnce, plannedJobs, printSummary, waitForSettled } from '../support/chaos-world.js';

/**
 * After a run has settled, everything is delivered again: every accepted delivery
 * re-sent by the provider (same webhook-id and body, a fresh timestamp and signature),
 * and every stored event put back on the queue as if the outbox redelivered it all.
 * Nothing may change financially.
 */
const JOBS = 60;
const SEED = chaosSeed();
const db = await freshDatabase();
const fleet = new Fleet(db.url);
const api = await fleet.server({ name: 'api', workers: 2 });

/** Everything money: every account's projection, every settlement and entry, every job's totals. */
async function moneySnapshot(db: Queryable) {
  const accounts = await db.query(
    `select id, kind, debits_pending::text, debits_posted::text, credits_pending::text, credits_posted::text from accounts order by id`,
  );
  const settlements = await db.query(`select settlement_key, amount::text, remainder::text from settlements order by settlement_key`);
  const entries = await db.query(`select id, settlement_key, entry_type, amount::text from ledger_entries order by id`);
  const jobs = await db.query(
    `select id, state, captured::text, released::text, adjusted::text, highest_correction from jobs order by id`,
  );
  return { accounts: accounts.rows, settlements: settlements.rows, entries: entries.rows, jobs: jobs.rows };
}

describe('a full replay after a run', () => {
  it(`re-delivering every delivery and requeueing every stored event changes nothing (seed ${SEED})`, { timeout: 180_000 }, async () => {
    const world = await createChaosWorld(api.url, { tenants: 4 });
    const planned = await plannedJobs(world, JOBS, SEED);
    const jobIds = planned.map((j) => j.id);
    const report = await simulate(planned, {
      baseUrl: api.url,
      provider: world.provider,
      secret: world.secret,
      seed: SEED,
      concurrency: 24,
      cancelJob: cancelJob(world),
    });
    expect(report.unexpected).toEqual([]);
    await waitForSettled(db.pool, jobIds);
    await expectExactlyOnce(db.pool, world, planned);
    const before = await moneySnapshot(db.pool);
    const walletsBefore = await Promise.all(world.tenants.map((t) => t.client.get(`/v1/wallets/${t.walletId}`)));

    // 1. The provider re-sends every genuine delivery: same id and bytes, signed anew.
    const genuine = new Map(report.results.filter((r) => !r.delivery.forged).map((r) => [r.delivery.eventId, r.delivery]));
    const answers = await mapConcurrent([...genuine.values()], 24, async (delivery) => {
      const resent = signDelivery(delivery.body, { id: delivery.eventId, secret: world.secret });
      const answer = await deliver(api.url, world.provider, resent);
      return { status: answer.status, body: answer.body, eventId: delivery.eventId };
    });
    expect(answers.filter((a) => a.status !== 200 || a.body.status !== 'already_accepted' || a.body.event_key !== a.eventId)).toEqual([]);

    // 2. Every stored event back on the queue, as a redelivering outbox would have it.
    const requeued = await db.pool.query(
      `update webhook_events
       set state = 'pending', attempts = 0, run_after = now(), lease_until = null, reason = null, last_error = null,
           processed_at = null, settlement_key = null
       where provider = $1`,
      [world.provider],
    );
    expect(requeued.rowCount).toBe(genuine.size);
    await db.pool.query(`select pg_notify($1, id::text) from unnest($2::uuid[]) as id`, [EVENTS_CHANNEL, jobIds]);
    await waitForSettled(db.pool, jobIds);

    // Every event was settled again, and none had an effect of its own this time.
    const states = await db.pool.query<{ state: string; n: number }>(
      `select state, count(*)::int as n from webhook_events where provider = $1 group by state order by state`,
      [world.provider],
    );
    expect(states.rows.filter((r) => r.state !== 'no_effect' && r.state !== 'stale')).toEqual([]);
    const processed = await db.pool.query<{ n: number }>(
      'select count(*)::int as n from webhook_events where provider = $1 and processed_at is not null',
      [world.provider],
    );
    expect(processed.rows[0]!.n).toBe(genuine.size);

    expect(await moneySnapshot(db.pool)).toEqual(before);
    const walletsAfter = await Promise.all(world.tenants.map((t) => t.client.get(`/v1/wallets/${t.walletId}`)));
    expect(walletsAfter.map((w) => w.body)).toEqual(walletsBefore.map((w) => w.body));
    expect(fleet.crashes).toEqual([]);
    const billing = await expectExactlyOnce(db.pool, world, planned);

    printSummary(`replay (seed ${SEED})`, {
      jobs: JOBS,
      deliveries: report.deliveries,
      redelivered: answers.length,
      events_requeued: requeued.rowCount ?? 0,
      settlements: before.settlements.length,
      balances_changed: 0,
      money_lost: billing.lost,
      money_duplicated: billing.duplicated,
    });
  });
});
