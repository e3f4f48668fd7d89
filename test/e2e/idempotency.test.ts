import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { startServer, waitUntil } from '../support/server.js';
import { Client, type Answer } from '../support/client.js';
import { createWorld, type World } from '../support/world.js';
import { countRows, expectError } from '../support/refusal.js';

/**
 * Idempotency-Key (CONTRACT "HTTP API"): required on POST /v1/jobs and credits, scoped
 * to principal, method and path, replayed with Idempotent-Replayed: true, never a
 * second effect — also under concurrency and after the key's record is gone.
 */

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 1 });
const admin = new Client(server.url);

const LIMITS = { input_tokens: 10_000, output_tokens: 5_000 }; // reserves 0.02 at 1.00 / 2.00 per 1M

function jobBody(world: World, extra: Record<string, unknown> = {}) {
  return { wallet_id: world.walletId, model: world.model, provider: world.provider, limits: LIMITS, ...extra };
}
const postJob = (world: World, key: string | null, body: unknown = jobBody(world)) =>
  world.tenant.post('/v1/jobs', body, key === null ? {} : { 'idempotency-key': key });
const postCredit = (walletId: string, key: string | null, body: unknown) =>
  admin.post(`/v1/wallets/${walletId}/credits`, body, key === null ? {} : { 'idempotency-key': key });

async function jobCount(world: World): Promise<number> {
  const result = await db.pool.query<{ n: number }>('select count(*)::int as n from jobs where tenant_id = $1', [world.tenantId]);
  return result.rows[0]!.n;
}
async function creditEntries(walletId: string): Promise<{ id: string; amount: bigint }[]> {
  const result = await db.pool.query<{ id: string; amount: bigint }>(
    `select id::text, amount from ledger_entries where entry_type = 'credit' and credit_account_id = $1 order by id`,
    [walletId],
  );
  return result.rows;
}
async function wallet(world: World) {
  return (await world.tenant.get(`/v1/wallets/${world.walletId}`)).body;
}

function expectReplay(replay: Answer, original: Answer): void {
  expect(replay.status).toBe(original.status);
  expect(replay.body).toEqual(original.body);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
}

describe('Idempotency-Key', () => {
  it('is required on POST /v1/jobs and POST /v1/wallets/{id}/credits: 400 idempotency_key_required, nothing done', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const before = await countRows(db.pool, ['jobs', 'holds', 'ledger_entries', 'idempotency_keys']);
    expectError(await postJob(world, null), 400, 'idempotency_key_required');
    expectError(await postJob(world, ''), 400, 'idempotency_key_required');
    expectError(await postCredit(world.walletId, null, { amount: '10.00' }), 400, 'idempotency_key_required');
    expectError(await postCredit(world.walletId, '', { amount: '10.00' }), 400, 'idempotency_key_required');
    expect(await countRows(db.pool, ['jobs', 'holds', 'ledger_entries', 'idempotency_keys'])).toEqual(before);
    expect((await wallet(world)).balance).toBe('0.000000');
  });

  it('replays the first answer for the same key and body, with Idempotent-Replayed: true, and has no second effect', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const creditKey = randomUUID();
    const credit = await postCredit(world.walletId, creditKey, { amount: '10.00', reference: 'pay_1' });
    expect(credit.status).toBe(201);
    expect(credit.headers.get('idempotent-replayed')).toBeNull();
    expectReplay(await postCredit(world.walletId, creditKey, { amount: '10.00', reference: 'pay_1' }), credit);
    // The same JSON, serialised otherwise, is the same body.
    expectReplay(await postCredit(world.walletId, creditKey, `{ "reference": "pay_1",  "amount": "10.00" }`), credit);
    expect(await creditEntries(world.walletId)).toEqual([{ id: credit.body.id, amount: 10_000_000n }]);

    const jobKey = randomUUID();
    const job = await postJob(world, jobKey);
    expect(job.status).toBe(201);
    expect(job.headers.get('idempotent-replayed')).toBeNull();
    expectReplay(await postJob(world, jobKey), job);
    expectReplay(await postJob(world, jobKey), job);
    expect(await jobCount(world)).toBe(1);
    expect(await wallet(world)).toMatchObject({ balance: '10.000000', reserved: '0.020000', available: '9.980000' });
  });

  it('refuses the same key with a different body: 422 idempotency_key_reused, nothing done', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const creditKey = randomUUID();
    expect((await postCredit(world.walletId, creditKey, { amount: '10.00' })).status).toBe(201);
    const jobKey = randomUUID();
    expect((await postJob(world, jobKey)).status).toBe(201);
    const before = await countRows(db.pool, ['jobs', 'holds', 'ledger_entries']);

    expectError(await postCredit(world.walletId, creditKey, { amount: '10.01' }), 422, 'idempotency_key_reused');
    expectError(await postCredit(world.walletId, creditKey, { amount: '10.00', reference: 'another' }), 422, 'idempotency_key_reused');
    expectError(await postJob(world, jobKey, jobBody(world, { limits: { input_tokens: 1 } })), 422, 'idempotency_key_reused');
    expectError(await postJob(world, jobKey, jobBody(world, { provider_job_ref: 'pj_1' })), 422, 'idempotency_key_reused');
    expect(await countRows(db.pool, ['jobs', 'holds', 'ledger_entries'])).toEqual(before);
    expect(await wallet(world)).toMatchObject({ balance: '10.000000', reserved: '0.020000' });
  });

  it('stores nothing for a request refused by validation (400, 422): the same key with a corrected body succeeds', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const creditKey = randomUUID();
    expectError(await postCredit(world.walletId, creditKey, { amount: '1e3' }), 400, 'invalid_amount');
    expectError(await postCredit(world.walletId, creditKey, { amount: '0' }), 400, 'invalid_amount');
    const credit = await postCredit(world.walletId, creditKey, { amount: '5.00' });
    expect(credit.status).toBe(201);
    expect(credit.headers.get('idempotent-replayed')).toBeNull();
    expect(credit.body.amount).toBe('5.000000');

    const jobKey = randomUUID();
    expect((await postJob(world, jobKey, jobBody(world, { limits: { input_tokens: -1 } }))).status).toBe(400);
    expect((await postJob(world, jobKey, jobBody(world, { limits: { input_tokens: 1.5 } }))).status).toBe(400);
    const unpriced = `model-${randomUUID().slice(0, 8)}`;
    expectError(await postJob(world, jobKey, jobBody(world, { model: unpriced })), 422, 'no_price');
    // Once the model has a price, the very same request (same key, same body) is a first request.
    expect((await admin.request('PUT', `/v1/prices/${unpriced}`, { currency: 'USD', unit_prices: { input_tokens: '1.00' } })).status).toBe(201);
    const job = await postJob(world, jobKey, jobBody(world, { model: unpriced }));
    expect(job.status).toBe(201);
    expect(job.headers.get('idempotent-replayed')).toBeNull();
    expect(job.body.reserved).toBe('0.010000');
    expect(await jobCount(world)).toBe(1);
  });

  it('replays a refusal that is not validation (402) like any first answer', async () => {
    const world = await createWorld(admin, { credit: '0.01' });
    const key = randomUUID();
    const refused = await postJob(world, key);
    expectError(refused, 402, 'insufficient_funds');
    expect((await postCredit(world.walletId, randomUUID(), { amount: '1.00' })).status).toBe(201);
    expectReplay(await postJob(world, key), refused);
    expect(await jobCount(world)).toBe(0);
    expect((await postJob(world, randomUUID())).status).toBe(201);
  });

  it('scopes keys by principal and by path', async () => {
    const a = await createWorld(admin, { credit: '1.00' });
    const b = await createWorld(admin, { credit: '1.00' });
    const key = randomUUID();
    // Two tenants, one key: two jobs.
    const jobA = await postJob(a, key);
    const jobB = await postJob(b, key);
    expect([jobA.status, jobB.status]).toEqual([201, 201]);
    expect(jobB.headers.get('idempotent-replayed')).toBeNull();
    expect(jobA.body.id).not.toBe(jobB.body.id);
    expect([await jobCount(a), await jobCount(b)]).toEqual([1, 1]);

    // One principal (the admin), one key, two paths: two credits.
    const creditKey = randomUUID();
    const creditA = await postCredit(a.walletId, creditKey, { amount: '2.00' });
    const creditB = await postCredit(b.walletId, creditKey, { amount: '2.00' });
    expect([creditA.status, creditB.status]).toEqual([201, 201]);
    expect(creditB.headers.get('idempotent-replayed')).toBeNull();
    expect((await creditEntries(a.walletId)).map((e) => e.amount)).toEqual([1_000_000n, 2_000_000n]);
    expect((await creditEntries(b.walletId)).map((e) => e.amount)).toEqual([1_000_000n, 2_000_000n]);

    // One tenant, one key, two creating POSTs: both happen.
    const walletKey = randomUUID();
    expect((await a.tenant.post('/v1/wallets', { currency: 'EUR' }, { 'idempotency-key': walletKey })).status).toBe(201);
    const second = await postJob(a, walletKey);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(await jobCount(a)).toBe(2);
  });

  it('treats every spelling of one call\'s URL as the same call: upper-case ids and percent-encoding replay, never apply twice', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const percentEncoded = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`).join('');
    const creditKey = randomUUID();
    const creditPaths = [
      `/v1/wallets/${world.walletId}/credits`,
      `/v1/wallets/${world.walletId.toUpperCase()}/credits`,
      `/v1/wallets/${percentEncoded(world.walletId)}/credits`,
      `/v1/%77allets/${world.walletId}/%63redits`,
      `/v1/wallets/${world.walletId}/credits?retry=1`,
    ];
    const credits: Answer[] = [];
    for (const path of creditPaths) credits.push(await admin.post(path, { amount: '10.00' }, { 'idempotency-key': creditKey }));
    expect(credits[0]!.status).toBe(201);
    for (const replay of credits.slice(1)) expectReplay(replay, credits[0]!);
    expect(await creditEntries(world.walletId)).toEqual([{ id: credits[0]!.body.id, amount: 10_000_000n }]);
    expect((await wallet(world)).balance).toBe('10.000000');

    const jobKey = randomUUID();
    const jobPaths = ['/v1/jobs', '/v1/%6Aobs', `/${percentEncoded('v1')}/jobs`, '/v1/jobs?x=1'];
    const jobs: Answer[] = [];
    for (const path of jobPaths) jobs.push(await world.tenant.post(path, jobBody(world), { 'idempotency-key': jobKey }));
    expect(jobs[0]!.status).toBe(201);
    for (const replay of jobs.slice(1)) expectReplay(replay, jobs[0]!);
    expect(await jobCount(world)).toBe(1);
    expect(await wallet(world)).toMatchObject({ balance: '10.000000', reserved: '0.020000' });
  });

  it('lets exactly one of 20 concurrent requests with the same key take effect; the others replay it or answer 409 idempotency_key_in_use', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const check = (answers: Answer[], original: Answer) => {
      for (const answer of answers) {
        if (answer.status === 409) expectError(answer, 409, 'idempotency_key_in_use');
        else expect({ status: answer.status, body: answer.body }).toEqual({ status: 201, body: original.body });
      }
    };

    const creditKey = randomUUID();
    const credits = await Promise.all(Array.from({ length: 20 }, () => postCredit(world.walletId, creditKey, { amount: '3.00' })));
    const firstCredit = credits.find((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null);
    expect(firstCredit, JSON.stringify(credits.map((a) => a.status))).toBeDefined();
    expect(credits.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    check(credits, firstCredit!);
    expect(await creditEntries(world.walletId)).toEqual([{ id: firstCredit!.body.id, amount: 3_000_000n }]);

    const jobKey = randomUUID();
    const jobs = await Promise.all(Array.from({ length: 20 }, () => postJob(world, jobKey)));
    const firstJob = jobs.find((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null);
    expect(firstJob, JSON.stringify(jobs.map((a) => a.status))).toBeDefined();
    expect(jobs.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    check(jobs, firstJob!);
    expect(await jobCount(world)).toBe(1);
    expect(await wallet(world)).toMatchObject({ balance: '3.000000', reserved: '0.020000' });

    // Once the first has ended, every retry is its replay.
    expectReplay(await postJob(world, jobKey), firstJob!);
    expectReplay(await postCredit(world.walletId, creditKey, { amount: '3.00' }), firstCredit!);
  });

  it('applies a credit once even when it is retried after its idempotency record is gone', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const key = randomUUID();
    const first = await postCredit(world.walletId, key, { amount: '25.00', reference: 'pay_25' });
    expect(first.status).toBe(201);
    const deleted = await db.pool.query(`delete from idempotency_keys where key = encode(sha256(convert_to($1, 'UTF8')), 'hex')`, [key]);
    expect(deleted.rowCount).toBe(1);

    const retry = await postCredit(world.walletId, key, { amount: '25.00', reference: 'pay_25' });
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(await creditEntries(world.walletId)).toEqual([{ id: first.body.id, amount: 25_000_000n }]);
    expect((await wallet(world)).balance).toBe('25.000000');

    // The record is gone again, and the "retry" asks for another amount: it cannot be this credit.
    await db.pool.query(`delete from idempotency_keys where key = encode(sha256(convert_to($1, 'UTF8')), 'hex')`, [key]);
    const other = await postCredit(world.walletId, key, { amount: '26.00', reference: 'pay_25' });
    expect(other.status).toBeGreaterThanOrEqual(400);
    expect(other.status).toBeLessThan(500);
    expectError(other, other.status, other.body.error.code);
    expect(await creditEntries(world.walletId)).toHaveLength(1);
    expect((await wallet(world)).balance).toBe('25.000000');
  });

  it('keeps records at least 7 days, and a credit\'s for ever, through the cleanup duty', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const creditKey = randomUUID();
    const credit = await postCredit(world.walletId, creditKey, { amount: '4.00' });
    const jobKey = randomUUID();
    const job = await postJob(world, jobKey, jobBody(world, { limits: { input_tokens: 1000 } }));
    expect([credit.status, job.status]).toEqual([201, 201]);
    await db.pool.query(`update idempotency_keys set created_at = now() - interval '8 days' where key = encode(sha256(convert_to($1, 'UTF8')), 'hex')`, [jobKey]);
    await db.pool.query(`update idempotency_keys set created_at = now() - interval '400 days' where key = encode(sha256(convert_to($1, 'UTF8')), 'hex')`, [creditKey]);

    // A record ten years old, which any retention lets go: its disappearance shows the cleanup ran.
    const sentinel = randomUUID();
    await db.pool.query(
      `insert into idempotency_keys (tenant_id, principal, method, route, path, key, request_hash, response_status, response_body, created_at)
       values ($1::uuid, 'tenant:' || $1, 'POST', '/v1/jobs', '/v1/jobs', $1, '\\x00', 201, '{}', now() - interval '10 years')`,
      [sentinel],
    );
    // Make the cleanup due now and wait until a worker has run it.
    const forced = await db.pool.query(`update duties set last_run_at = 'epoch' where name = 'idempotency_cleanup'`);
    expect(forced.rowCount).toBe(1);
    await waitUntil(async () => (await db.pool.query('select 1 from idempotency_keys where key = $1', [sentinel])).rowCount === 0);

    expectReplay(await postJob(world, jobKey, jobBody(world, { limits: { input_tokens: 1000 } })), job);
    expectReplay(await postCredit(world.walletId, creditKey, { amount: '4.00' }), credit);
    expect(await jobCount(world)).toBe(1);
    expect(await creditEntries(world.walletId)).toHaveLength(1);
  });
});
