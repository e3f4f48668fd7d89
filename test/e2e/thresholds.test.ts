import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Client, deliver, signDelivery } from '../support/client.js';
import { freshDatabase } from '../support/database.js';
import { runTally, startServer, waitUntil } from '../support/server.js';
import { completion, createWorld, submitJob, type World } from '../support/world.js';

/**
 * Balance thresholds end to end (docs/CONTRACT.md "Balance thresholds"): a fall of
 * `available` below a threshold is announced once per crossing — however many
 * reservations, captures and corrections commit at once, in concurrent batches or in
 * one — and a rise back above re-arms it. Settlement runs in `tally worker` processes
 * started when the test has delivered what they should settle, so a batch holds what
 * the test means it to.
 */

const BATCH = 16;
const db = await freshDatabase();
const server = await startServer(db.url, { workers: 0, env: { TALLY_OUTBOUND_ALLOW: '127.0.0.1' } });
const admin = new Client(server.url);

/** A job reserving 1.00 USD (createWorld's price: 1.00 per million input tokens). */
const ONE = { input_tokens: 1_000_000 };

async function listening(world: World): Promise<void> {
  const endpoint = await world.tenant.post('/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks', events: ['wallet.balance_low'] });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
}

/** The wallet.balance_low messages of the tenant, oldest first, as written to the outbox. */
async function balanceLow(world: World): Promise<{ wallet_id: string; currency: string; threshold: string; available: string }[]> {
  const result = await db.pool.query(
    `select payload->'data' as data from outbound_messages where tenant_id = $1 and type = 'wallet.balance_low' order by id`,
    [world.tenantId],
  );
  return result.rows.map((r) => r.data);
}

async function thresholds(world: World) {
  const list = await world.tenant.get(`/v1/wallets/${world.walletId}/thresholds`);
  expect(list.status).toBe(200);
  return list.body.data as { id: string; amount: string; armed: boolean }[];
}

async function available(world: World): Promise<string> {
  return (await world.tenant.get(`/v1/wallets/${world.walletId}`)).body.available;
}

/** Starts a `tally worker` (batches of BATCH), waits until `settled` holds, stops it. */
async function settleWithWorker(settled: () => Promise<boolean>, concurrency = 4): Promise<void> {
  const worker = runTally(['worker', '--concurrency', String(concurrency)], {
    DATABASE_URL: db.url,
    TALLY_SETTLE_BATCH_SIZE: String(BATCH),
    TALLY_POLL_INTERVAL_MS: '50',
  });
  try {
    await waitUntil(settled, 60_000);
  } finally {
    await worker.stop();
  }
}

const accepted = async (world: World, body: unknown) => {
  const answer = await deliver(server.url, world.provider, signDelivery(body));
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
};

async function jobsIn(world: World, state: string, ids: string[], adjusted?: boolean): Promise<boolean> {
  const rows = await db.pool.query<{ n: number }>(
    `select count(*)::int as n from jobs where id = any($1::uuid[]) and state = $2 and ($3::boolean is null or (adjusted <> 0) = $3)`,
    [ids, state, adjusted ?? null],
  );
  return rows.rows[0]!.n === ids.length;
}

/** What `available` was after each of the wallet's entries, in its order, from `afterSequence` on. */
async function availableAfterEach(world: World, afterSequence: number): Promise<bigint[]> {
  const rows = await db.pool.query<{ available: bigint }>(
    'select balance_after - reserved_after as available from ledger_entries where wallet_id = $1 and wallet_seq > $2 order by wallet_seq',
    [world.walletId, afterSequence],
  );
  return rows.rows.map((r) => r.available);
}

const micros = (amount: string) => BigInt(amount.replace('.', ''));
const text = (micros: bigint) => `${micros / 1_000_000n}.${(micros % 1_000_000n).toString().padStart(6, '0')}`;

describe('balance thresholds', () => {
  it('are added, listed and deleted by the tenant or the admin, and refused where they do not belong', async () => {
    const world = await createWorld(admin, { credit: '100.00' });
    const created = await world.tenant.post(`/v1/wallets/${world.walletId}/thresholds`, { amount: '50.00' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      wallet_id: world.walletId,
      amount: '50.000000',
      armed: true,
      created_at: expect.any(String),
    });
    const byAdmin = await admin.post(`/v1/wallets/${world.walletId}/thresholds`, { amount: '150' });
    expect(byAdmin.body).toMatchObject({ amount: '150.000000', armed: false });

    const again = await world.tenant.post(`/v1/wallets/${world.walletId}/thresholds`, { amount: '50.000000' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('threshold_exists');
    expect((await world.tenant.post(`/v1/wallets/${world.walletId}/thresholds`, { amount: '-1' })).status).toBe(400);
    expect((await world.tenant.post(`/v1/wallets/${world.walletId}/thresholds`, { amount: 5 })).status).toBe(400);
    const other = await createWorld(admin);
    expect((await other.tenant.post(`/v1/wallets/${world.walletId}/thresholds`, { amount: '1' })).status).toBe(404);
    expect((await other.tenant.get(`/v1/wallets/${world.walletId}/thresholds`)).status).toBe(404);

    const listed = await world.tenant.get(`/v1/wallets/${world.walletId}/thresholds?limit=1`);
    expect(listed.body).toEqual({ data: [expect.objectContaining({ id: byAdmin.body.id })], has_more: true });
    const older = await world.tenant.get(`/v1/wallets/${world.walletId}/thresholds?starting_after=${byAdmin.body.id}`);
    expect(older.body).toEqual({ data: [created.body], has_more: false });

    for (let i = 2; i < 10; i++)
      expect((await world.tenant.post(`/v1/wallets/${world.walletId}/thresholds`, { amount: String(i) })).status).toBe(201);
    const full = await world.tenant.post(`/v1/wallets/${world.walletId}/thresholds`, { amount: '10' });
    expect([full.status, full.body.error.code]).toEqual([422, 'too_many_thresholds']);

    expect((await other.tenant.request('DELETE', `/v1/wallets/${world.walletId}/thresholds/${created.body.id}`)).status).toBe(404);
    const deleted = await world.tenant.request('DELETE', `/v1/wallets/${world.walletId}/thresholds/${created.body.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ ...created.body, deleted: true });
    expect((await world.tenant.request('DELETE', `/v1/wallets/${world.walletId}/thresholds/${created.body.id}`)).status).toBe(404);
    expect((await world.tenant.request('DELETE', `/v1/wallets/${world.walletId}/thresholds/not-an-id`)).status).toBe(404);
    expect((await world.tenant.post(`/v1/wallets/${world.walletId}/thresholds`, { amount: '10' })).status).toBe(201);
  });

  it('announce each fall below once under 64 concurrent reservations, captures and corrections; a credit re-arms', async () => {
    const world = await createWorld(admin, { credit: '100.00' });
    await listening(world);
    expect((await world.tenant.post(`/v1/wallets/${world.walletId}/thresholds`, { amount: '50.00' })).body.armed).toBe(true);
    const low = (available: string) => ({ wallet_id: world.walletId, currency: 'USD', threshold: '50.000000', available });

    // 64 reservations of 1.00 at once: 100 → 36, below 50 at the 51st.
    const jobs = await Promise.all(Array.from({ length: 64 }, () => submitJob(world, ONE)));
    expect(await available(world)).toBe('36.000000');
    expect(await balanceLow(world)).toEqual([low('49.000000')]);
    expect((await thresholds(world))[0]!.armed).toBe(false);

    // 64 captures of 0.50 settled by concurrent batches: each releases 0.50, 36 → 68, re-armed, nothing sent.
    await Promise.all(jobs.map((job) => accepted(world, completion(world, job.id, { input_tokens: 500_000 }))));
    const ids = jobs.map((j) => j.id);
    await settleWithWorker(() => jobsIn(world, 'captured', ids));
    expect(await available(world)).toBe('68.000000');
    expect((await thresholds(world))[0]!.armed).toBe(true);
    expect(await balanceLow(world)).toHaveLength(1);

    // 64 corrections to the full hold, 0.50 more each, in concurrent batches: 68 → 36, one fall.
    await Promise.all(jobs.map((job) => accepted(world, completion(world, job.id, ONE, 'job.usage_corrected', { correction: 1 }))));
    await settleWithWorker(() => jobsIn(world, 'captured', ids, true));
    expect(await available(world)).toBe('36.000000');
    expect(await balanceLow(world)).toEqual([low('49.000000'), low('49.500000')]);

    // A credit lifts it back above (re-armed, nothing sent); the next fall is announced again.
    const credit = await admin.post(`/v1/wallets/${world.walletId}/credits`, { amount: '20.00' }, { 'idempotency-key': randomUUID() });
    expect(credit.status).toBe(201);
    expect((await thresholds(world))[0]!.armed).toBe(true);
    await Promise.all(Array.from({ length: 7 }, () => submitJob(world, ONE)));
    expect(await balanceLow(world)).toEqual([low('49.000000'), low('49.500000'), low('49.000000')]);

    const run = await admin.post('/v1/reconciliation/runs', {});
    expect(run.body.exceptions).toEqual([]);
  });

  it('in one settlement batch: a rise re-arms, and falls among rises are announced once each, in the order of the entries', async () => {
    const world = await createWorld(admin, { credit: '30.00' });
    await listening(world);
    const jobs = await Promise.all(Array.from({ length: BATCH }, () => submitJob(world, ONE))); // 30 → 14
    const threshold = await world.tenant.post(`/v1/wallets/${world.walletId}/thresholds`, { amount: '18.00' });
    expect(threshold.body.armed).toBe(false);

    // All BATCH completions wait before the worker starts: one claim, one batch, one statement.
    await Promise.all(jobs.map((job) => accepted(world, completion(world, job.id, { input_tokens: 250_000 }))));
    const ids = jobs.map((j) => j.id);
    await settleWithWorker(() => jobsIn(world, 'captured', ids), 1);
    const instants = await db.pool.query(
      'select distinct created_at from ledger_entries where job_id = any($1::uuid[]) and entry_type = $2',
      [ids, 'capture'],
    );
    expect(instants.rowCount, 'the captures were posted by one statement').toBe(1);
    expect(await available(world)).toBe('26.000000'); // 14 + 16 × 0.75
    expect((await thresholds(world))[0]!.armed).toBe(true);
    expect(await balanceLow(world)).toEqual([]);

    // Eight new holds (26 → 18: still at the threshold, armed). Then one batch of eight
    // releases (+1.00 each) and eight corrections (−0.75 each), in whatever order the
    // claim returns them: each fall below 18 along the wallet's order is one message.
    const held = await Promise.all(Array.from({ length: 8 }, () => submitJob(world, ONE)));
    expect(await available(world)).toBe('18.000000');
    const before = Number((await db.pool.query('select entry_seq from accounts where id = $1', [world.walletId])).rows[0].entry_seq);
    for (const [i, job] of jobs.slice(0, 8).entries()) {
      await accepted(world, completion(world, job.id, ONE, 'job.usage_corrected', { correction: 1 }));
      await accepted(world, completion(world, held[i]!.id, {}, 'job.failed'));
    }
    const batch = [...jobs.slice(0, 8), ...held].map((j) => j.id);
    await settleWithWorker(
      async () =>
        (await jobsIn(
          world,
          'released',
          held.map((j) => j.id),
        )) && jobsIn(world, 'captured', ids.slice(0, 8), true),
      1,
    );
    const posted = await db.pool.query(
      'select distinct created_at from ledger_entries where job_id = any($1::uuid[]) and wallet_seq > $2',
      [batch, before],
    );
    expect(posted.rowCount, 'the batch was posted by one statement').toBe(1);
    expect(await available(world)).toBe('20.000000'); // 18 + 8 − 6

    let armed = true;
    const falls: string[] = [];
    for (const after of await availableAfterEach(world, before)) {
      if (armed && after < micros('18.000000')) falls.push(text(after));
      armed = after >= micros('18.000000');
    }
    expect((await balanceLow(world)).map((m) => m.available)).toEqual(falls);
    expect((await thresholds(world))[0]!.armed).toBe(armed);
  });
});
