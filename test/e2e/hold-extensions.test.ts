import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Client, deliver, signDelivery } from '../support/client.js';
import { freshDatabase } from '../support/database.js';
import { runTally, startServer, waitUntil } from '../support/server.js';
import { completion, createWorld, type World } from '../support/world.js';

/**
 * Long-running jobs (CONTRACT.md "Long-running jobs: hold extensions"), through the API
 * and signed webhooks only: the tenant's extension, automatic extensions driven by
 * progress reports, a terminal event's extension that the grants cannot hold (debt), a
 * report's extension the wallet refuses (exhausted), and job.hold_exhausted once per
 * value of `reserved`. Prices: 1.000000 per unit of gpu_seconds, so amounts read as units.
 */

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 0, env: { TALLY_OUTBOUND_ALLOW: '127.0.0.1' } });
const admin = new Client(server.url);
const PRICES = { gpu_seconds: '1000000.00', input_tokens: '0.10' };

async function world(credit: string, policies?: Record<string, unknown>): Promise<World> {
  const w = await createWorld(admin, { credit, prices: PRICES, ...(policies ? { policies } : {}) });
  // the outbox keeps a tenant's messages only while an endpoint listens (nothing is sent: port 9 discards)
  expect((await w.tenant.post('/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks', events: ['*'] })).status).toBe(201);
  return w;
}

async function submit(w: World, limits: Record<string, number>, autoExtend?: unknown) {
  return w.tenant.post(
    '/v1/jobs',
    { wallet_id: w.walletId, model: w.model, provider: w.provider, limits, ...(autoExtend ? { auto_extend: autoExtend } : {}) },
    { 'idempotency-key': randomUUID() },
  );
}

function extend(w: World, jobId: string, add: unknown, key = randomUUID()) {
  return w.tenant.post(`/v1/jobs/${jobId}/extensions`, { add }, { 'idempotency-key': key });
}

function progress(w: World, jobId: string, usage: Record<string, number>) {
  return completion(w, jobId, usage, 'job.progress');
}

/** Delivers the events in order, each settled before the next (a worker in between). */
async function settleInOrder(w: World, jobId: string, events: unknown[]): Promise<void> {
  for (const body of events) expect((await deliver(server.url, w.provider, signDelivery(body))).status).toBe(200);
  const worker = runTally(['worker', '--concurrency', '2'], { DATABASE_URL: db.url, TALLY_POLL_INTERVAL_MS: '50' });
  try {
    await waitUntil(async () => {
      const open = await db.pool.query<{ n: number }>(
        `select count(*)::int as n from webhook_events where job_id = $1 and state in ('pending', 'processing')`,
        [jobId],
      );
      return open.rows[0]!.n === 0;
    }, 60_000);
  } finally {
    await worker.stop();
  }
}

async function job(w: World, id: string) {
  const view = await w.tenant.get(`/v1/jobs/${id}`);
  expect(view.status).toBe(200);
  return view.body;
}

async function wallet(w: World) {
  return (await w.tenant.get(`/v1/wallets/${w.walletId}`)).body;
}

async function messages(w: World, type: string): Promise<Record<string, unknown>[]> {
  const rows = await db.pool.query<{ payload: { data: Record<string, unknown> } }>(
    'select payload from outbound_messages where tenant_id = $1 and type = $2 order by created_at, id',
    [w.tenantId, type],
  );
  return rows.rows.map((r) => r.payload.data);
}

const units = (amount: string) => Number(amount);

describe('POST /v1/jobs/{id}/extensions', () => {
  it('grows the limits and the hold by the price difference, as extension 1, 2…; the capture bills from the grown hold', async () => {
    const w = await world('1000.00');
    const submitted = await submit(w, { gpu_seconds: 100 });
    expect(submitted.status).toBe(201);
    const id = submitted.body.id as string;

    const key = randomUUID();
    const first = await extend(w, id, { gpu_seconds: 50 }, key);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body.reserved).toBe('150.000000');
    expect(first.body.limits).toEqual({ gpu_seconds: 150 });
    expect(first.body.extensions).toEqual([
      expect.objectContaining({
        version: 1,
        amount: '50.000000',
        source: 'api',
        limits: { gpu_seconds: 150 },
        settlement_key: `${w.tenantId}:${id}:extension:1`,
      }),
    ]);
    expect(first.body.funding).toEqual([expect.objectContaining({ held: '150.000000' })]);
    const replay = await extend(w, id, { gpu_seconds: 50 }, key);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.reserved).toBe('150.000000');

    const second = await extend(w, id, { gpu_seconds: 25 });
    expect(second.body.extensions.map((x: { version: number }) => x.version)).toEqual([1, 2]);
    expect((await wallet(w)).reserved).toBe('175.000000');

    // An addition that prices to nothing (0.1 of a micro-unit, rounded half-up per dimension): the limits rise, no number is used.
    const free = await extend(w, id, { input_tokens: 1 });
    expect(free.status).toBe(201);
    expect(free.body.limits).toEqual({ gpu_seconds: 175, input_tokens: 1 });
    expect(free.body.extensions).toHaveLength(2);

    await settleInOrder(w, id, [completion(w, id, { gpu_seconds: 160 })]);
    const done = await job(w, id);
    expect(done.state).toBe('captured');
    expect([done.reserved, done.captured, done.released]).toEqual(['175.000000', '160.000000', '15.000000']);
    expect((await wallet(w)).balance).toBe('840.000000');
    expect((await wallet(w)).reserved).toBe('0.000000');

    const late = await extend(w, id, { gpu_seconds: 1 });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('job_terminal');
    expect((await messages(w, 'job.hold_extended')).map((m) => m.version)).toEqual([1, 2]);
  });

  it('refuses what the contract refuses, writing nothing; a 402 stores nothing under its key', async () => {
    const w = await world('120.00');
    const id = (await submit(w, { gpu_seconds: 100 })).body.id as string;
    for (const add of [{}, { gpu_seconds: 0 }, { gpu_seconds: -1 }, { gpu_seconds: 1.5 }, { unknown_dim: 3 }]) {
      const refused = await extend(w, id, add);
      expect(refused.status, JSON.stringify(add)).toBe(422);
      expect(refused.body.error.code).toBe('invalid_limits');
    }
    const key = randomUUID();
    const poor = await extend(w, id, { gpu_seconds: 21 }, key);
    expect(poor.status).toBe(402);
    expect(poor.body.error.code).toBe('insufficient_funds');
    // the wallet is funded, and the same key now succeeds: the 402 was not kept
    expect((await admin.post(`/v1/wallets/${w.walletId}/credits`, { amount: '1.00' }, { 'idempotency-key': randomUUID() })).status).toBe(
      201,
    );
    const funded = await extend(w, id, { gpu_seconds: 21 }, key);
    expect(funded.status).toBe(201);
    expect(funded.headers.get('idempotent-replayed')).toBeNull();
    expect(funded.body.reserved).toBe('121.000000');
    expect((await wallet(w)).available).toBe('0.000000');
    expect((await extend(w, randomUUID(), { gpu_seconds: 1 })).status).toBe(404);
  });
});

describe('automatic extension', () => {
  it('grows by whole steps as progress reports come, stops at max_limits (exhausted, announced once), and the completion bills up to the hold', async () => {
    const w = await world('1000.00');
    const submitted = await submit(w, { gpu_seconds: 100 }, { step: { gpu_seconds: 100 }, max_limits: { gpu_seconds: 500 } });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(201);
    const id = submitted.body.id as string;
    const before = (await job(w, id)).hold_expires_at as string;
    await settleInOrder(w, id, [progress(w, id, { gpu_seconds: 50 })]);
    let view = await job(w, id);
    // a settled progress report moves the hold's expiry to its commit + hold_ttl_seconds
    expect(Date.parse(view.hold_expires_at)).toBeGreaterThan(Date.parse(before));
    const holdRow = await db.pool.query<{ expires_at: Date }>('select expires_at from holds where job_id = $1', [id]);
    expect(holdRow.rows[0]!.expires_at.toISOString()).toBe(view.hold_expires_at);
    // target 50 + 100 = 150 > 100: one step, to 200
    expect([view.reserved, view.limits, view.usage_so_far, view.hold_exhausted]).toEqual([
      '200.000000',
      { gpu_seconds: 200 },
      { gpu_seconds: 50 },
      null,
    ]);

    await settleInOrder(w, id, [progress(w, id, { gpu_seconds: 240 }), progress(w, id, { gpu_seconds: 120 })]);
    view = await job(w, id);
    // 240 + 100 = 340: two steps, to 400; a smaller report later keeps the maximum
    expect([view.reserved, view.usage_so_far]).toEqual(['400.000000', { gpu_seconds: 240 }]);

    await settleInOrder(w, id, [progress(w, id, { gpu_seconds: 460 }), progress(w, id, { gpu_seconds: 460 })]);
    view = await job(w, id);
    // 460 + 100 = 560, capped at 500: exhausted by max_limits, announced once
    expect(view.reserved).toBe('500.000000');
    expect(view.hold_exhausted).toEqual(
      expect.objectContaining({ reason: 'max_limits', reserved: '500.000000', usage_price: '460.000000' }),
    );
    expect(view.extensions.map((x: { version: number; source: string }) => [x.version, x.source])).toEqual([
      [1, 'auto'],
      [2, 'auto'],
      [3, 'auto'],
    ]);
    expect(await messages(w, 'job.hold_exhausted')).toEqual([
      { job_id: id, reason: 'max_limits', reserved: '500.000000', usage_price: '460.000000' },
    ]);

    await settleInOrder(w, id, [completion(w, id, { gpu_seconds: 520 })]);
    view = await job(w, id);
    expect([view.state, view.captured, view.released, view.hold_exhausted]).toEqual(['captured', '500.000000', '0.000000', null]);
    expect(view.alerts).toContain('usage_exceeds_reservation');
    expect((await wallet(w)).balance).toBe('500.000000');
  });

  it("holds a completion's extension the grants cannot cover as debt, beyond any refusal", async () => {
    const w = await world('150.00');
    const id = (await submit(w, { gpu_seconds: 100 }, { step: { gpu_seconds: 100 }, max_limits: { gpu_seconds: 1000 } })).body.id as string;
    await settleInOrder(w, id, [completion(w, id, { gpu_seconds: 370 })]);
    const view = await job(w, id);
    // to 400 (three steps): 50 from the grant, 250 held against the debt; 370 captured
    expect([view.state, view.reserved, view.captured, view.released]).toEqual(['captured', '400.000000', '370.000000', '30.000000']);
    expect(view.extensions).toEqual([expect.objectContaining({ version: 1, amount: '300.000000', source: 'auto' })]);
    expect(view.funding).toEqual([expect.objectContaining({ held: '150.000000', captured: '150.000000', returned: '0.000000' })]);
    expect(view.funding_debt).toBe('220.000000');
    const after = await wallet(w);
    expect([after.balance, after.reserved, after.debt]).toEqual(['-220.000000', '0.000000', '220.000000']);
    expect(view.alerts).toContain('wallet_overdrawn');
  });

  it("leaves a report's extension the wallet cannot fund unheld, exhausted for that reason, announced once per reserved", async () => {
    const w = await world('150.00');
    const id = (await submit(w, { gpu_seconds: 100 }, { step: { gpu_seconds: 100 }, max_limits: { gpu_seconds: 1000 } })).body.id as string;
    await settleInOrder(w, id, [
      progress(w, id, { gpu_seconds: 60 }),
      progress(w, id, { gpu_seconds: 60 }),
      progress(w, id, { gpu_seconds: 70 }),
    ]);
    let view = await job(w, id);
    expect([view.reserved, view.limits, view.extensions]).toEqual(['100.000000', { gpu_seconds: 100 }, []]);
    expect(view.hold_exhausted).toEqual(
      expect.objectContaining({ reason: 'insufficient_funds', reserved: '100.000000', usage_price: '70.000000' }),
    );
    expect(await messages(w, 'job.hold_exhausted')).toHaveLength(1);
    expect((await wallet(w)).reserved).toBe('100.000000');

    // money arrives: the next report extends, the exhausted state clears
    expect((await admin.post(`/v1/wallets/${w.walletId}/credits`, { amount: '500.00' }, { 'idempotency-key': randomUUID() })).status).toBe(
      201,
    );
    await settleInOrder(w, id, [progress(w, id, { gpu_seconds: 80 })]);
    view = await job(w, id);
    expect([view.reserved, view.hold_exhausted]).toEqual(['200.000000', null]);
    expect(units(view.reserved)).toBeGreaterThan(80);
  });

  it('refuses an auto_extend the contract refuses (422 invalid_limits), reserving nothing', async () => {
    const w = await world('1000.00');
    for (const rule of [
      { step: { gpu_seconds: 0 }, max_limits: { gpu_seconds: 100 } },
      { step: { unknown_dim: 1 }, max_limits: { unknown_dim: 100 } },
      { step: { gpu_seconds: 10 }, max_limits: { gpu_seconds: 100, input_tokens: 5 } },
      { step: { gpu_seconds: 10 }, max_limits: { gpu_seconds: 50 } },
      { step: { gpu_seconds: 10 } },
    ]) {
      const refused = await submit(w, { gpu_seconds: 100 }, rule);
      expect([400, 422], JSON.stringify(rule)).toContain(refused.status);
      if (refused.status === 422) expect(refused.body.error.code).toBe('invalid_limits');
    }
    expect((await wallet(w)).reserved).toBe('0.000000');
  });
});

describe('the batch path', () => {
  it('settles a hot wallet of many growing jobs in batches, exactly: each job one extension from its report, its capture from the grown hold', async () => {
    const w = await world('10000.00');
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const submitted = await submit(w, { gpu_seconds: 100 }, { step: { gpu_seconds: 100 }, max_limits: { gpu_seconds: 500 } });
      expect(submitted.status).toBe(201);
      ids.push(submitted.body.id);
    }
    // Everything accepted before a worker runs, so that the worker's claims take batches of many jobs.
    for (const id of ids)
      expect((await deliver(server.url, w.provider, signDelivery(progress(w, id, { gpu_seconds: 150 })))).status).toBe(200);
    for (const [i, id] of ids.entries())
      expect((await deliver(server.url, w.provider, signDelivery(completion(w, id, { gpu_seconds: 200 + i })))).status).toBe(200);
    const worker = runTally(['worker', '--concurrency', '4'], { DATABASE_URL: db.url, TALLY_POLL_INTERVAL_MS: '50' });
    try {
      await waitUntil(async () => {
        const open = await db.pool.query<{ n: number }>(
          `select count(*)::int as n from jobs where id = any($1::uuid[]) and state <> 'captured'`,
          [ids],
        );
        return open.rows[0]!.n === 0;
      }, 120_000);
    } finally {
      await worker.stop();
    }
    let captured = 0;
    for (const [i, id] of ids.entries()) {
      const view = await job(w, id);
      // 150 + 100 = 250: limits 300 (two steps), the completion's 200 + i within them
      expect([view.reserved, view.captured, view.extensions.length], id).toEqual(['300.000000', `${200 + i}.000000`, 1]);
      captured += 200 + i;
    }
    expect((await wallet(w)).balance).toBe(`${10_000 - captured}.000000`);
    expect((await wallet(w)).reserved).toBe('0.000000');
  });
});

describe('spend limits', () => {
  it("count an extension like a reservation: a tenant's is refused with 402 spend_limit_reached, a report's leaves the hold exhausted (spend_limit)", async () => {
    const w = await world('1000.00');
    const limit = await admin.request('PUT', `/v1/tenants/${w.tenantId}/spend-limits`, {
      currency: 'USD',
      period: 'day',
      amount: '250.00',
    });
    expect([200, 201], JSON.stringify(limit.body)).toContain(limit.status);
    const id = (await submit(w, { gpu_seconds: 100 }, { step: { gpu_seconds: 100 }, max_limits: { gpu_seconds: 1000 } })).body.id as string;
    const over = await extend(w, id, { gpu_seconds: 151 });
    expect(over.status).toBe(402);
    expect(over.body.error.code).toBe('spend_limit_reached');
    expect((await extend(w, id, { gpu_seconds: 100 })).status).toBe(201); // 200 of 250 spent
    // 250 + 100 = 350 > 300: one step to 400 would take the day's spend to 400 > 250
    await settleInOrder(w, id, [progress(w, id, { gpu_seconds: 250 })]);
    const view = await job(w, id);
    expect([view.reserved, view.extensions.length]).toEqual(['200.000000', 1]);
    expect(view.hold_exhausted).toEqual(
      expect.objectContaining({ reason: 'spend_limit', reserved: '200.000000', usage_price: '250.000000' }),
    );
    const spent = (await w.tenant.get(`/v1/tenants/${w.tenantId}/spend-limits`)).body.data.find(
      (l: { period: string }) => l.period === 'day',
    );
    expect(spent.spent).toBe('200.000000');
  });
});

describe('reconciliation', () => {
  it('finds every job above consistent: extensions, their entries, shares, spend and the debt they left', async () => {
    const run = await admin.post('/v1/reconciliation/runs', {});
    expect(run.status).toBe(201);
    const unexpected = (run.body.exceptions as { class: string }[]).filter(
      (e) => !['usage_exceeds_reservation', 'wallet_overdrawn'].includes(e.class),
    );
    expect(unexpected, JSON.stringify(unexpected, null, 1)).toEqual([]);
  });

  it('reports an extension record without its entries as extension_mismatch (a tampered database)', async () => {
    const w = await world('1000.00');
    const id = (await submit(w, { gpu_seconds: 100 })).body.id as string;
    const key = `${w.tenantId}:${id}:extension:7`;
    await db.pool.query(
      `insert into job_extensions (job_id, tenant_id, version, settlement_key, amount, limits, source, allocation)
       values ($1, $2, 7, $3, 5000000, '{"gpu_seconds": 105}', 'api', '[]')`,
      [id, w.tenantId, key],
    );
    const run = await admin.post('/v1/reconciliation/runs', {});
    const found = (run.body.exceptions as { class: string; objects: Record<string, string>; detail: Record<string, unknown> }[]).filter(
      (e) => e.class === 'extension_mismatch',
    );
    expect(found).toEqual([
      expect.objectContaining({
        objects: { settlement_key: key, job_id: id, tenant_id: w.tenantId },
        detail: { recorded: '5.000000', entries: null, fault: 'extension_without_entries' },
      }),
    ]);
  });
});
