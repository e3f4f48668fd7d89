import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { startServer, waitUntil } from '../support/server.js';
import { Client, deliver, signDelivery, type SignedDelivery } from '../support/client.js';
import { completion, createWorld, submitJob } from '../support/world.js';
import { mapConcurrent, projectionDrift } from '../support/refusal.js';

/**
 * The "Must show" duplicate storm: every completion arrives several times under its own
 * event id, again under new ids, with a progress event, all shuffled and concurrent,
 * against a server with two settlement workers. The money must come out exact.
 */

const JOBS = 150;
const CONCURRENCY = 48;
const CREDIT = '1000.00';
/** Odd unit prices so that rounding matters; `cached_tokens` is used but unpriced (recorded, not billed). */
const PRICES = { input_tokens: '1.234567', output_tokens: '3.000001', reasoning_tokens: '0.000001' } as const;
const LIMITS = { input_tokens: 100_000, output_tokens: 100_000, reasoning_tokens: 3_000_000, cached_tokens: 1_000_000 };

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 2 });
const admin = new Client(server.url);

/** CONTRACT "Money", computed here with bigints, independently of src/pricing. */
function micros(decimal: string): bigint {
  const [whole, fraction = ''] = decimal.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
}
function formatMicros(value: bigint): string {
  const sign = value < 0n ? '-' : '';
  const abs = value < 0n ? -value : value;
  return `${sign}${abs / 1_000_000n}.${(abs % 1_000_000n).toString().padStart(6, '0')}`;
}
/** Per dimension with a unit price: units × price / 1,000,000 rounded half-up to the micro; summed. */
function priceOf(usage: Record<string, number>): bigint {
  let total = 0n;
  for (const [dimension, units] of Object.entries(usage)) {
    const unitPrice = (PRICES as Record<string, string>)[dimension];
    if (unitPrice === undefined) continue;
    const numerator = BigInt(units) * micros(unitPrice);
    total += (2n * numerator + 1_000_000n) / 2_000_000n;
  }
  return total;
}

/** A seeded generator, so that a failure can be replayed (the seed is in the test name). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const SEED = Number(process.env.STORM_SEED ?? Date.now() % 1_000_000);
const random = mulberry32(SEED);
const integer = (max: number) => Math.floor(random() * (max + 1));

function usageFor(index: number): Record<string, number> {
  // Every third job has a reasoning line of exactly half a micro (0.5 → 1, 1.5 → 2, 2.5 → 3:
  // half-up, where banker's rounding would give 0, 2, 2).
  const reasoning = index % 3 === 0 ? [500_000, 1_500_000, 2_500_000][index % 9 / 3]! : integer(LIMITS.reasoning_tokens);
  return {
    input_tokens: integer(LIMITS.input_tokens),
    output_tokens: integer(LIMITS.output_tokens),
    reasoning_tokens: reasoning,
    cached_tokens: integer(LIMITS.cached_tokens),
  };
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = integer(i);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

describe('a duplicate storm', () => {
  it(`bills each of ${JOBS} jobs exactly once, to the micro (seed ${SEED})`, async () => {
    const world = await createWorld(admin, { credit: CREDIT, prices: { ...PRICES } });
    const jobs = await mapConcurrent(Array.from({ length: JOBS }, (_, i) => i), 16, async (index) => {
      const job = await submitJob(world, LIMITS);
      return { id: job.id, usage: usageFor(index) };
    });
    const reservation = priceOf(LIMITS);
    expect((await world.tenant.get(`/v1/wallets/${world.walletId}`)).body.reserved).toBe(formatMicros(reservation * BigInt(JOBS)));

    // Per job: the completion 4× under one id, 2× more under new ids, one progress event.
    // Each delivery is signed once, so every copy of an id carries the very same bytes.
    const deliveries: { eventId: string; delivery: SignedDelivery }[] = [];
    for (const job of jobs) {
      const body = completion(world, job.id, job.usage);
      const first = signDelivery(body);
      const firstId = first.headers['webhook-id']!;
      for (let copy = 0; copy < 4; copy++) deliveries.push({ eventId: firstId, delivery: first });
      for (let other = 0; other < 2; other++) {
        const again = signDelivery(body);
        deliveries.push({ eventId: again.headers['webhook-id']!, delivery: again });
      }
      const progress = signDelivery({ type: 'job.progress', timestamp: new Date().toISOString(), data: { job_id: job.id } }, { id: `progress_${randomUUID()}` });
      deliveries.push({ eventId: progress.headers['webhook-id']!, delivery: progress });
    }
    shuffle(deliveries);

    const answers = await mapConcurrent(deliveries, CONCURRENCY, async ({ eventId, delivery }) => {
      const answer = await deliver(server.url, world.provider, delivery);
      return { eventId, status: answer.status, body: answer.body };
    });

    const statuses = answers.filter((a) => a.status !== 200);
    expect(statuses, 'every delivery is answered 200').toEqual([]);
    const byId = new Map<string, string[]>();
    for (const a of answers) {
      expect(a.body.event_key).toBe(a.eventId);
      byId.set(a.eventId, [...(byId.get(a.eventId) ?? []), a.body.status]);
    }
    expect(byId.size).toBe(JOBS * 4);
    for (const [eventId, outcomes] of byId) {
      expect(outcomes.filter((s) => s === 'accepted'), `event ${eventId}`).toHaveLength(1);
      expect(outcomes.filter((s) => s !== 'accepted' && s !== 'already_accepted'), `event ${eventId}`).toEqual([]);
    }

    // Settled means: every job captured and no event left waiting.
    await waitUntil(async () => {
      const open = await db.pool.query<{ jobs: number; events: number }>(
        `select (select count(*)::int from jobs where state <> 'captured') as jobs,
                (select count(*)::int from webhook_events where state in ('pending', 'processing')) as events`,
      );
      return open.rows[0]!.jobs === 0 && open.rows[0]!.events === 0;
    }, 45_000);

    const views = await mapConcurrent(jobs, 24, async (job) => (await world.tenant.get(`/v1/jobs/${job.id}`)).body);
    let charged = 0n;
    for (const [index, view] of views.entries()) {
      const expected = priceOf(jobs[index]!.usage);
      charged += expected;
      expect(view.state).toBe('captured');
      expect(view.settlements.map((s: any) => [s.charge_type, s.version, s.amount])).toEqual([['capture', 1, formatMicros(expected)]]);
      expect(view).toMatchObject({
        reserved: formatMicros(reservation),
        captured: formatMicros(expected),
        released: formatMicros(reservation - expected),
        adjusted: '0.000000',
      });
      expect(view.events).toHaveLength(4);
      const states = view.events.map((e: any) => e.state);
      expect(states.every((s: string) => s === 'applied' || s === 'no_effect'), JSON.stringify(view.events)).toBe(true);
      // Exactly one completion captured; the other two completions had no effect.
      const completions = view.events.filter((e: any) => e.type === 'job.completed');
      expect(completions.map((e: any) => e.state).sort()).toEqual(['applied', 'no_effect', 'no_effect']);
    }

    const wallet = (await world.tenant.get(`/v1/wallets/${world.walletId}`)).body;
    const balance = micros(CREDIT) - charged;
    expect(wallet).toMatchObject({ balance: formatMicros(balance), reserved: '0.000000', available: formatMicros(balance) });

    const captures = await db.pool.query<{ n: number; jobs: number; total: string }>(
      `select count(*)::int as n, count(distinct job_id)::int as jobs, coalesce(sum(amount), 0)::text as total
       from settlements where charge_type = 'capture'`,
    );
    expect(captures.rows[0]).toEqual({ n: JOBS, jobs: JOBS, total: charged.toString() });
    const others = await db.pool.query<{ n: number }>(`select count(*)::int as n from settlements where charge_type <> 'capture'`);
    expect(others.rows[0]!.n).toBe(0);
    // Every delivery is in its job's view (the accepted ones from the events, the repeats
    // from delivery_attempts): per event exactly the outcomes it was answered with.
    const delivered = new Map<string, string[]>();
    for (const d of views.flatMap((view) => view.deliveries as { event_key: string; outcome: string }[])) {
      delivered.set(d.event_key, [...(delivered.get(d.event_key) ?? []), d.outcome]);
    }
    expect(new Map([...delivered].map(([id, outcomes]) => [id, outcomes.sort()]))).toEqual(
      new Map([...byId].map(([id, outcomes]) => [id, [...outcomes].sort()])),
    );
    const outcomes = [...delivered.values()].flat();
    expect(outcomes.filter((o) => o === 'accepted')).toHaveLength(JOBS * 4);
    expect(outcomes.filter((o) => o === 'already_accepted')).toHaveLength(JOBS * 3);
    const attempts = await db.pool.query<{ outcome: string; n: number }>(
      'select outcome, count(*)::int as n from delivery_attempts group by outcome order by outcome',
    );
    expect(attempts.rows).toEqual([{ outcome: 'already_accepted', n: JOBS * 3 }]);
    const open = await db.pool.query<{ n: number }>('select count(*)::int as n from holds where resolved_by is null');
    expect(open.rows[0]!.n).toBe(0);
    expect(await projectionDrift(db.pool)).toEqual([]);
  });
});
