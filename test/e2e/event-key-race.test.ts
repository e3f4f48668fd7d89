import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { startServer, waitUntil } from '../support/server.js';
import { Client, deliver, signDelivery, type Answer, type SignedDelivery } from '../support/client.js';
import { completion, createWorld, submitJob, type World } from '../support/world.js';
import { expectError, mapConcurrent, projectionDrift } from '../support/refusal.js';

/**
 * Issue 33.6: an event key is unique per provider across tenants (CONTRACT.md "Webhooks").
 * Two deliveries of one `webhook-id`, their bodies naming two tenants' jobs, race many
 * times: through two receivers (two processes, so nothing in memory is shared and only the
 * database can decide) and through one (where they may also meet in one group commit).
 * Each time one is 200 `accepted` and the other 409 `event_key_conflict`; once the workers
 * have settled, only the winner's job is captured. Then the same bytes again get the same
 * answers, and two identical deliveries racing are one `accepted`, one `already_accepted`.
 */

const RACES = 200;
/** races run at once: each pair's two requests are sent together; more pairs keep both receivers' groups busy */
const RACES_AT_ONCE = 4;
const LIMITS = { input_tokens: 1_000, output_tokens: 1_000 };
const USAGE = { input_tokens: 400, output_tokens: 300 };

const db = await freshDatabase();
const [one, two] = await Promise.all([startServer(db.url, { workers: 1 }), startServer(db.url, { workers: 1 })]);
const admin = new Client(one.url);

/** A second tenant with a funded wallet, whose jobs run at `world`'s provider and model. */
async function otherTenant(world: World): Promise<World> {
  const tenant = await admin.post('/v1/tenants', { name: `other-${randomUUID().slice(0, 8)}` });
  expect(tenant.status).toBe(201);
  const client = admin.as(tenant.body.api_key);
  const wallet = await client.post('/v1/wallets', { currency: 'USD' });
  expect(wallet.status).toBe(201);
  const credit = await admin.post(`/v1/wallets/${wallet.body.id}/credits`, { amount: '1000.00' }, { 'idempotency-key': randomUUID() });
  expect(credit.status).toBe(201);
  return { ...world, tenantId: tenant.body.id, apiKey: tenant.body.api_key, tenant: client, walletId: wallet.body.id };
}

/** What a delivery was answered: "200 accepted", "200 already_accepted", or the status and error code. */
function outcomeOf(answer: Answer): string {
  if (answer.status === 200) return `200 ${answer.body.status}`;
  expectError(answer, answer.status, answer.body?.error?.code);
  return `${answer.status} ${answer.body.error.code}`;
}

interface Race {
  key: string;
  jobs: [string, string];
  deliveries: [SignedDelivery, SignedDelivery];
  receivers: [string, string];
}

/** Half the races through two processes, half through one; which tenant's delivery goes where alternates. */
const ROUTES: [string, string][] = [
  [one.url, two.url],
  [one.url, one.url],
  [two.url, one.url],
  [two.url, two.url],
];
const through = (race: Race): string => (race.receivers[0] === race.receivers[1] ? 'one receiver' : 'two receivers');

describe('two deliveries of one event key naming two tenants’ jobs', () => {
  it(`accept one and refuse the other, ${RACES} races out of ${RACES}, and capture one job`, { timeout: 240_000 }, async () => {
    const a = await createWorld(admin, { credit: '1000.00' });
    const b = await otherTenant(a);
    const races: Race[] = await mapConcurrent(
      Array.from({ length: RACES }, (_, i) => i),
      16,
      async (i) => {
        const [jobA, jobB] = await Promise.all([submitJob(a, LIMITS), submitJob(b, LIMITS)]);
        const key = `msg_race_${i}_${randomUUID()}`;
        return {
          key,
          jobs: [jobA.id, jobB.id],
          // One webhook-id, two bodies: each names its own tenant's job (and that tenant).
          deliveries: [signDelivery(completion(a, jobA.id, USAGE), { id: key }), signDelivery(completion(b, jobB.id, USAGE), { id: key })],
          receivers: ROUTES[i % ROUTES.length]!,
        };
      },
    );

    const raced = await mapConcurrent(races, RACES_AT_ONCE, async (race) =>
      Promise.all(race.deliveries.map((delivery, side) => deliver(race.receivers[side]!, a.provider, delivery))),
    );
    const outcomes = raced.map((answers) => answers.map(outcomeOf));
    const tally: Record<string, number> = {};
    for (const [i, pair] of outcomes.entries()) {
      const name = `${through(races[i]!)}: ${[...pair].sort().join(' + ')}`;
      tally[name] = (tally[name] ?? 0) + 1;
    }
    expect(tally, 'the answers to the pairs').toEqual({
      'two receivers: 200 accepted + 409 event_key_conflict': RACES / 2,
      'one receiver: 200 accepted + 409 event_key_conflict': RACES / 2,
    });
    for (const [i, answers] of raced.entries()) {
      const winner = answers.find((answer) => answer.status === 200)!;
      expect(winner.body).toEqual({ status: 'accepted', event_key: races[i]!.key });
    }
    const winners = outcomes.map((pair) => pair.indexOf('200 accepted'));

    // One event per key, the winner's.
    const events = await db.pool.query<{ event_key: string; job_id: string; tenant_id: string }>(
      'select event_key, job_id, tenant_id from webhook_events where provider = $1 order by event_key',
      [a.provider],
    );
    expect(events.rows).toHaveLength(RACES);
    const eventOf = new Map(events.rows.map((e) => [e.event_key, e]));
    for (const [i, race] of races.entries()) {
      expect(eventOf.get(race.key), race.key).toMatchObject({ job_id: race.jobs[winners[i]!] });
    }

    // The workers of both processes settle every winner: one capture per race, never the loser's job.
    const winnerJobs = races.map((race, i) => race.jobs[winners[i]!]!);
    const loserJobs = races.map((race, i) => race.jobs[1 - winners[i]!]!);
    await waitUntil(async () => {
      const open = await db.pool.query<{ events: number; captured: number }>(
        `select (select count(*)::int from webhook_events where provider = $1 and state in ('pending', 'processing')) as events,
                (select count(*)::int from jobs where id = any($2::uuid[]) and state = 'captured') as captured`,
        [a.provider, winnerJobs],
      );
      return open.rows[0]!.events === 0 && open.rows[0]!.captured === RACES;
    }, 60_000);
    const captures = await db.pool.query<{ job_id: string }>(
      `select job_id from settlements where charge_type = 'capture' order by job_id`,
    );
    expect(captures.rows.map((r) => r.job_id)).toEqual([...winnerJobs].sort());
    const losers = await db.pool.query<{ state: string; n: number }>(
      'select state, count(*)::int as n from jobs where id = any($1::uuid[]) group by state',
      [loserJobs],
    );
    expect(losers.rows).toEqual([{ state: 'reserved', n: RACES }]);

    // The same bytes again, each to the other receiver this time: the same answers, and
    // nothing more written but the attempts.
    const again = await mapConcurrent(races, 8, async (race, i) =>
      Promise.all(race.deliveries.map((delivery, side) => deliver(race.receivers[1 - side]!, a.provider, delivery))).then((answers) =>
        answers.map((answer, side) => [side === winners[i] ? 'winner' : 'loser', outcomeOf(answer)].join(': ')),
      ),
    );
    expect(new Set(again.flat())).toEqual(new Set(['winner: 200 already_accepted', 'loser: 409 event_key_conflict']));
    expect(again.flat()).toHaveLength(2 * RACES);
    const after = await db.pool.query<{ events: number; captures: number }>(
      `select (select count(*)::int from webhook_events where provider = $1) as events,
              (select count(*)::int from settlements) as captures`,
      [a.provider],
    );
    expect(after.rows[0]).toEqual({ events: RACES, captures: RACES });
    // Every refusal and repeat is recorded, under the winner's job (the key's event).
    const attempts = await db.pool.query<{ outcome: string; n: number; on_winner: number }>(
      `select outcome, count(*)::int as n, count(*) filter (where job_id = any($2::uuid[]))::int as on_winner
       from delivery_attempts where provider = $1 group by outcome order by outcome`,
      [a.provider, winnerJobs],
    );
    expect(attempts.rows).toEqual([
      { outcome: 'already_accepted', n: RACES, on_winner: RACES },
      { outcome: 'event_key_conflict', n: 2 * RACES, on_winner: 2 * RACES },
    ]);
    expect(await projectionDrift(db.pool)).toEqual([]);
  });

  it('still answers the same bytes raced under one key as one accepted and one already_accepted', { timeout: 120_000 }, async () => {
    const world = await createWorld(admin, { credit: '1000.00' });
    const jobs = await mapConcurrent(
      Array.from({ length: 40 }, () => null),
      16,
      () => submitJob(world, LIMITS),
    );
    const pairs = await mapConcurrent(jobs, RACES_AT_ONCE, async (job, i) => {
      const delivery = signDelivery(completion(world, job.id, USAGE), { id: `msg_twin_${i}_${randomUUID()}` });
      const receivers = i % 2 === 0 ? [one.url, two.url] : [one.url, one.url];
      const answers = await Promise.all(receivers.map((url) => deliver(url, world.provider, delivery)));
      return answers.map(outcomeOf).sort().join(' + ');
    });
    expect(new Set(pairs)).toEqual(new Set(['200 accepted + 200 already_accepted']));
    const events = await db.pool.query<{ n: number }>('select count(*)::int as n from webhook_events where provider = $1', [
      world.provider,
    ]);
    expect(events.rows[0]!.n).toBe(jobs.length);
  });
});
