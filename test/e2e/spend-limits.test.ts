import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Client, deliver, signDelivery } from '../support/client.js';
import { backdateOpenHolds } from '../support/backdate-holds.js';
import { freshDatabase } from '../support/database.js';
import { runTally, startServer, waitUntil } from '../support/server.js';
import { completion, createWorld, submitJob, type World } from '../support/world.js';

/**
 * Spend limits end to end (docs/CONTRACT.md "Spend limits"): a reservation that would
 * take the period's spend (captures and adjustments posted in it, plus the open holds of
 * jobs reserved in it) above a limit is refused with 402 spend_limit_reached, exactly,
 * under 64 concurrent reservations; releases give back, captures keep what they charged;
 * a new UTC day or month starts from nothing. Periods are moved with the database's
 * clock (the test back-dates its own holds and counters), never waited for.
 */

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 0 });
const admin = new Client(server.url);

// createWorld's price: 1.00 per million input tokens
const units = (n: number) => ({ input_tokens: n * 1_000_000 });
const micros = (amount: string) => BigInt(amount.replace('.', ''));

function reserve(world: World, n: number) {
  return world.tenant.post(
    '/v1/jobs',
    { wallet_id: world.walletId, model: world.model, provider: world.provider, limits: units(n) },
    { 'idempotency-key': randomUUID() },
  );
}

async function putLimit(world: World, period: 'day' | 'month', amount: string) {
  const put = await admin.request('PUT', `/v1/tenants/${world.tenantId}/spend-limits`, { currency: 'USD', period, amount });
  expect([200, 201], JSON.stringify(put.body)).toContain(put.status);
  return put.body;
}

async function limits(world: World): Promise<Record<'day' | 'month', { spent: string; period_start: string; amount: string }>> {
  const list = await world.tenant.get(`/v1/tenants/${world.tenantId}/spend-limits`);
  expect(list.status).toBe(200);
  return Object.fromEntries(list.body.data.map((l: { period: string }) => [l.period, l])) as Record<
    'day' | 'month',
    { spent: string; period_start: string; amount: string }
  >;
}

/** Delivers the events, then runs a `tally worker` until `settled` holds, then stops it. */
async function settle(world: World, events: unknown[], settled: () => Promise<boolean>): Promise<void> {
  for (const body of events) expect((await deliver(server.url, world.provider, signDelivery(body))).status).toBe(200);
  const worker = runTally(['worker', '--concurrency', '2'], { DATABASE_URL: db.url, TALLY_POLL_INTERVAL_MS: '50' });
  try {
    await waitUntil(settled, 60_000);
  } finally {
    await worker.stop();
  }
}

async function inState(ids: string[], state: string): Promise<boolean> {
  const rows = await db.pool.query<{ n: number }>('select count(*)::int as n from jobs where id = any($1::uuid[]) and state = $2', [
    ids,
    state,
  ]);
  return rows.rows[0]!.n === ids.length;
}

/** The database's clock: today's and the month's first day (UTC), and the same `interval` earlier. */
async function periods(interval: string) {
  const result = await db.pool.query<{ today: string; month: string; earlier_day: string; earlier_month: string }>(
    `select to_char((now() at time zone 'UTC')::date, 'YYYY-MM-DD') as today,
            to_char(date_trunc('month', now() at time zone 'UTC'), 'YYYY-MM-DD') as month,
            to_char(((now() - $1::interval) at time zone 'UTC')::date, 'YYYY-MM-DD') as earlier_day,
            to_char(date_trunc('month', (now() - $1::interval) at time zone 'UTC'), 'YYYY-MM-DD') as earlier_month`,
    [interval],
  );
  return result.rows[0]!;
}

/**
 * Moves the tenant's open holds, and the spend counted for them, `interval` into the
 * past — as if they had been reserved then. The tests that call it have only open holds.
 */
async function backdate(world: World, interval: string): Promise<void> {
  const open = await db.pool.query('select count(*)::int as n from holds where tenant_id = $1 and resolved_by is not null', [
    world.tenantId,
  ]);
  expect(open.rows[0].n, 'only open holds are moved').toBe(0);
  await backdateOpenHolds(db.pool, world.tenantId, interval);
}

async function reconcileClean(): Promise<void> {
  const run = await admin.post('/v1/reconciliation/runs', {});
  expect(run.status).toBe(201);
  expect(run.body.exceptions).toEqual([]);
}

describe('spend limits', () => {
  it('are set, replaced, listed and removed by the admin; the tenant reads its own', async () => {
    const world = await createWorld(admin);
    const created = await admin.request('PUT', `/v1/tenants/${world.tenantId}/spend-limits`, {
      currency: 'USD',
      period: 'day',
      amount: '25.00',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const today = await periods('0 days');
    expect(created.body).toEqual({
      id: expect.any(String),
      tenant_id: world.tenantId,
      currency: 'USD',
      period: 'day',
      amount: '25.000000',
      period_start: `${today.today}T00:00:00Z`,
      spent: '0.000000',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const replaced = await admin.request('PUT', `/v1/tenants/${world.tenantId}/spend-limits`, {
      currency: 'USD',
      period: 'day',
      amount: '30',
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ id: created.body.id, amount: '30.000000' });
    const month = await putLimit(world, 'month', '100');
    expect(month.period_start).toBe(`${today.month}T00:00:00Z`);

    const own = await world.tenant.get(`/v1/tenants/${world.tenantId}/spend-limits`);
    expect(own.body).toEqual({ data: [month, replaced.body], has_more: false });
    const other = await createWorld(admin);
    expect((await other.tenant.get(`/v1/tenants/${world.tenantId}/spend-limits`)).status).toBe(404);
    expect(
      (await world.tenant.request('PUT', `/v1/tenants/${world.tenantId}/spend-limits`, { currency: 'USD', period: 'day', amount: '1' }))
        .status,
    ).toBe(403);
    const week = await admin.request('PUT', `/v1/tenants/${world.tenantId}/spend-limits`, { currency: 'USD', period: 'week', amount: '1' });
    expect([week.status, week.body.error.code, week.body.error.param]).toEqual([400, 'invalid_request', 'period']);
    expect(
      (await admin.request('PUT', `/v1/tenants/${randomUUID()}/spend-limits`, { currency: 'USD', period: 'day', amount: '1' })).status,
    ).toBe(404);

    const removed = await admin.request('DELETE', `/v1/tenants/${world.tenantId}/spend-limits/${month.id}`);
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ ...month, deleted: true });
    expect((await admin.request('DELETE', `/v1/tenants/${world.tenantId}/spend-limits/${month.id}`)).status).toBe(404);
    expect((await admin.request('DELETE', `/v1/tenants/${other.tenantId}/spend-limits/${created.body.id}`)).status).toBe(404);
    expect((await world.tenant.request('DELETE', `/v1/tenants/${world.tenantId}/spend-limits/${created.body.id}`)).status).toBe(403);
  });

  it('is never exceeded by 64 concurrent reservations; refusals name the limit and the spend; releases give back, captures keep their charge', async () => {
    const world = await createWorld(admin, { credit: '1000.00' });
    await putLimit(world, 'day', '40.00');
    await putLimit(world, 'month', '500.00');
    // 64 reservations of 1, 2 or 3 at once: 128 asked for, 40 allowed.
    const sizes = Array.from({ length: 64 }, (_, i) => 1 + (i % 3));
    const answers = await Promise.all(sizes.map((n) => reserve(world, n)));
    const reserved = answers.flatMap((a, i) => (a.status === 201 ? [{ id: a.body.id as string, size: sizes[i]! }] : []));
    const refused = answers.flatMap((a, i) => (a.status === 201 ? [] : [{ answer: a, size: sizes[i]! }]));
    const total = reserved.reduce((sum, r) => sum + r.size, 0);
    expect(total).toBeLessThanOrEqual(40);
    expect(total).toBeGreaterThan(40 - 3); // a refusal means the next one did not fit
    expect(refused.length).toBeGreaterThan(0);
    for (const { answer, size } of refused) {
      expect(answer.status).toBe(402);
      expect(answer.body.error.code).toBe('spend_limit_reached');
      const said = /daily spend limit of 40\.000000 USD is reached: (\d+\.\d{6}) USD spent this day/.exec(answer.body.error.message);
      expect(said, answer.body.error.message).not.toBeNull();
      expect(micros(said![1]!) + BigInt(size) * 1_000_000n).toBeGreaterThan(micros('40.000000'));
    }
    const counted = await limits(world);
    expect(counted.day.spent).toBe(`${total}.000000`);
    expect(counted.month.spent).toBe(`${total}.000000`);
    const holds = await db.pool.query('select sum(amount)::text as sum from holds where tenant_id = $1 and resolved_by is null', [
      world.tenantId,
    ]);
    expect(holds.rows[0].sum).toBe(`${total}000000`);
    expect((await world.tenant.get(`/v1/wallets/${world.walletId}`)).body.available).toBe(`${1000 - total}.000000`);

    // Releases give their holds back; a capture of 0.25 keeps 0.25 of its hold.
    const [failed, captured] = [reserved.slice(0, 3), reserved[3]!];
    const freed = failed.reduce((sum, r) => sum + r.size, 0);
    await settle(
      world,
      [...failed.map((r) => completion(world, r.id, {}, 'job.failed')), completion(world, captured.id, { input_tokens: 250_000 })],
      async () =>
        (await inState(
          failed.map((r) => r.id),
          'released',
        )) && inState([captured.id], 'captured'),
    );
    const afterSettling = micros(`${total - freed - captured.size}.000000`) + 250_000n;
    expect(micros((await limits(world)).day.spent)).toBe(afterSettling);
    const room = micros('40.000000') - afterSettling;
    const fits = Number(room / 1_000_000n);
    const again = await Promise.all(Array.from({ length: fits + 2 }, () => reserve(world, 1)));
    expect(again.filter((a) => a.status === 201)).toHaveLength(fits);
    expect(again.filter((a) => a.status === 402 && a.body.error.code === 'spend_limit_reached')).toHaveLength(2);
    await reconcileClean();
  });

  it('a new day starts fresh: yesterday counts only in its day (and in the month when it is this month)', async () => {
    const world = await createWorld(admin, { credit: '1000.00' });
    await putLimit(world, 'day', '5.00');
    await putLimit(world, 'month', '8.00');
    const first = await Promise.all(Array.from({ length: 5 }, () => reserve(world, 1)));
    expect(first.map((a) => a.status)).toEqual([201, 201, 201, 201, 201]);
    const sixth = await reserve(world, 1);
    expect([sixth.status, sixth.body.error.code]).toEqual([402, 'spend_limit_reached']);
    expect(sixth.body.error.message).toMatch(/daily spend limit of 5\.000000 USD is reached: 5\.000000 USD spent this day/);

    // Reserved yesterday, by the database's clock.
    await backdate(world, '1 day');
    await reconcileClean();
    const clock = await periods('1 day');
    const sameMonth = clock.earlier_month === clock.month;
    const now = await limits(world);
    expect(now.day).toMatchObject({ spent: '0.000000', period_start: `${clock.today}T00:00:00Z` });
    expect(now.month.spent).toBe(sameMonth ? '5.000000' : '0.000000');

    // Today: the day allows 5 again; the month allows 3 more when yesterday was this month.
    const allowed = sameMonth ? 3 : 5;
    const today = await Promise.all(Array.from({ length: allowed }, () => reserve(world, 1)));
    expect(today.map((a) => a.status)).toEqual(Array(allowed).fill(201));
    const over = await reserve(world, 1);
    expect(over.status).toBe(402);
    expect(over.body.error.message).toMatch(
      sameMonth ? /monthly spend limit of 8\.000000 USD is reached: 8\.000000 USD spent this month/ : /daily spend limit/,
    );

    // A capture today of a hold reserved yesterday: the hold leaves yesterday, the charge counts today.
    const yesterdays = first[0]!.body.id as string;
    await settle(world, [completion(world, yesterdays, { input_tokens: 250_000 })], () => inState([yesterdays], 'captured'));
    expect((await limits(world)).day.spent).toBe(`${allowed}.250000`);
    const day = await db.pool.query(
      `select spent::text from spend_periods where tenant_id = $1 and period = 'day' and starts_on = $2::date`,
      [world.tenantId, clock.earlier_day],
    );
    expect(day.rows[0].spent).toBe('4000000');
    await reconcileClean();
  });

  it('a new month starts fresh', async () => {
    const world = await createWorld(admin, { credit: '1000.00' });
    await putLimit(world, 'month', '3.00');
    const first = await Promise.all(Array.from({ length: 4 }, () => reserve(world, 1)));
    expect(first.map((a) => a.status).sort()).toEqual([201, 201, 201, 402]);
    await backdate(world, '1 month');
    await reconcileClean();
    const clock = await periods('1 month');
    expect((await limits(world)).month).toMatchObject({ spent: '0.000000', period_start: `${clock.month}T00:00:00Z` });
    const last = await db.pool.query(
      `select spent::text from spend_periods where tenant_id = $1 and period = 'month' and starts_on = $2::date`,
      [world.tenantId, clock.earlier_month],
    );
    expect(last.rows[0].spent).toBe('3000000');
    const fresh = await Promise.all(Array.from({ length: 4 }, () => reserve(world, 1)));
    expect(fresh.map((a) => a.status).sort()).toEqual([201, 201, 201, 402]);
  });
});
