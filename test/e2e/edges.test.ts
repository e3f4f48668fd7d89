import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { startServer, waitUntil } from '../support/server.js';
import { Client, deliver, signDelivery } from '../support/client.js';
import { completion, createWorld, submitJob } from '../support/world.js';
import { countRows, expectError, projectionDrift } from '../support/refusal.js';

/**
 * Input at the edges (issue 11): whatever a client or provider sends, Tally answers a 4xx
 * with a stable code and stores nothing — never a 5xx (a provider retries a 5xx for days)
 * — and never takes a request for a job that can bill nothing.
 */

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 1 });
const admin = new Client(server.url);
const TABLES = ['tenants', 'jobs', 'holds', 'ledger_entries', 'webhook_events', 'delivery_attempts', 'idempotency_keys', 'price_versions'] as const;

/** `{"a":{"a":…1…}}`, `depth` objects deep. */
function nested(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

describe('no 5xx for what a request carries', () => {
  it('refuses a webhook-id longer than an event key may be (400 invalid_payload), storing nothing', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);
    const before = await countRows(db.pool, TABLES);
    const delivery = signDelivery(completion(world, job.id, { input_tokens: 10 }), { id: `msg_${'x'.repeat(600)}` });
    expectError(await deliver(server.url, world.provider, delivery), 400, 'invalid_payload');
    expect(await countRows(db.pool, TABLES)).toEqual(before);
  });

  it('refuses JSON nested tens of thousands deep (400 json_too_deep), on every JSON route and at intake, storing nothing', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);
    const before = await countRows(db.pool, TABLES);
    const deep = nested(50_000);
    const jobBody = `{"wallet_id":"${world.walletId}","model":"${world.model}","provider":"${world.provider}","limits":{"input_tokens":1},"extra":${deep}}`;
    expectError(await world.tenant.post('/v1/jobs', jobBody, { 'idempotency-key': randomUUID() }), 400, 'json_too_deep');
    expectError(await admin.post(`/v1/wallets/${world.walletId}/credits`, `{"amount":"1.00","x":${deep}}`, { 'idempotency-key': randomUUID() }), 400, 'json_too_deep');
    expectError(await admin.post('/v1/tenants', `{"name":"deep","x":${deep}}`, { 'idempotency-key': randomUUID() }), 400, 'json_too_deep');
    expectError(await admin.post('/v1/providers', `{"name":"deep","kind":"fal","jwks":{"keys":[${deep}]}}`), 400, 'json_too_deep');
    // At intake the body is signed bytes: nesting is refused after the signature is checked.
    const signed = signDelivery(`{"type":"job.completed","data":{"job_id":"${job.id}","usage":{"input_tokens":1},"x":${deep}}}`);
    const answer = await deliver(server.url, world.provider, signed);
    expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(500);
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(await countRows(db.pool, TABLES)).toEqual(before);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('refuses text PostgreSQL cannot store as JSON (a lone surrogate) with a 400, and accepts it where a provider\'s body is only kept as bytes', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);
    const before = await countRows(db.pool, TABLES);
    const lone = '"\\ud800"'; // JSON text for a lone high surrogate
    const price = await admin.request('PUT', `/v1/prices/${world.model}`, `{"currency":"USD","unit_prices":{${lone}:"1.00"}}`);
    expect(price.status, JSON.stringify(price.body)).toBe(400);
    const jobAnswer = await world.tenant.post(
      '/v1/jobs',
      `{"wallet_id":"${world.walletId}","model":"${world.model}","provider":"${world.provider}","limits":{"input_tokens":1,${lone}:1}}`,
      { 'idempotency-key': randomUUID() },
    );
    expect(jobAnswer.status, JSON.stringify(jobAnswer.body)).toBe(400);
    const usage = await admin.post('/v1/provider-usage', `{"import_id":"i-${randomUUID()}","records":[{"provider":"${world.provider}","provider_job_ref":"r","usage":{${lone}:1}}]}`);
    expect(usage.status, JSON.stringify(usage.body)).toBe(400);
    const signed = signDelivery(`{"type":"job.completed","data":{"job_id":"${job.id}","usage":{"input_tokens":1,${lone}:1}}}`);
    expectError(await deliver(server.url, world.provider, signed), 400, 'invalid_payload');
    expect(await countRows(db.pool, TABLES)).toEqual(before);

    // In a field Tally ignores, the same text is no reason to lose a billing event.
    const tolerated = signDelivery(`{"type":"job.completed","data":{"job_id":"${job.id}","usage":{"input_tokens":1},"output":${lone},"log":"a\\u0000b"}}`);
    const accepted = await deliver(server.url, world.provider, tolerated);
    expect([accepted.status, accepted.body.status]).toEqual([200, 'accepted']);
    // settled before the next test counts rows: its capture's entries must not land in that count
    await waitUntil(async () => (await world.tenant.get(`/v1/jobs/${job.id}`)).body.state === 'captured');
  });

  it('refuses a reservation beyond the range of amounts (422 amount_out_of_range, naming the limit), reserving nothing', async () => {
    const world = await createWorld(admin, { prices: { input_tokens: '1000000000000' } });
    const before = await countRows(db.pool, TABLES);
    const answer = await world.tenant.post(
      '/v1/jobs',
      { wallet_id: world.walletId, model: world.model, provider: world.provider, limits: { input_tokens: Number.MAX_SAFE_INTEGER } },
      { 'idempotency-key': randomUUID() },
    );
    expectError(answer, 422, 'amount_out_of_range');
    expect(answer.body.error.message).toContain('1000000000000');
    expect(await countRows(db.pool, TABLES)).toEqual(before);
  });

  it('refuses a credit that would take a balance beyond the range of amounts (422 amount_out_of_range), applying nothing', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const big = '1000000000000';
    let answer;
    // Each credit is within range; their sum is beyond what a balance may hold.
    for (let i = 0; i < 12; i++) {
      answer = await admin.post(`/v1/wallets/${world.walletId}/credits`, { amount: big }, { 'idempotency-key': randomUUID() });
      if (answer.status !== 201) break;
    }
    expectError(answer!, 422, 'amount_out_of_range');
    expect(answer!.body.error.message).toContain('1000000000000');
    const wallet = await world.tenant.get(`/v1/wallets/${world.walletId}`);
    expect(BigInt(wallet.body.balance.split('.')[0]) <= 1_000_000_000_000n).toBe(true);
    expect(await projectionDrift(db.pool)).toEqual([]);
  });
});

describe('no job that reserves nothing by mistake', () => {
  it('refuses limits that name no priced dimension (422 invalid_limits, listing the priced ones), reserving nothing', async () => {
    const world = await createWorld(admin);
    const before = await countRows(db.pool, TABLES);
    for (const limits of [{}, { images: 3 }, { Input_Tokens: 10 }]) {
      const answer = await world.tenant.post(
        '/v1/jobs',
        { wallet_id: world.walletId, model: world.model, provider: world.provider, limits },
        { 'idempotency-key': randomUUID() },
      );
      expectError(answer, 422, 'invalid_limits');
      expect(answer.body.error.message).toContain('input_tokens');
      expect(answer.body.error.message).toContain('output_tokens');
    }
    expect(await countRows(db.pool, TABLES)).toEqual(before);
    // A priced dimension beside an unpriced one is fine: the unpriced one is recorded, not billed.
    expect((await submitJob(world, { input_tokens: 1000, images: 3 })).reserved).toBe('0.001000');
  });

  it('refuses limits that price to zero (422 invalid_limits): such a job would hold nothing and bill nothing, whatever its usage', async () => {
    const world = await createWorld(admin);
    const before = await countRows(db.pool, TABLES);
    for (const limits of [{ input_tokens: 0 }, { input_tokens: 0, output_tokens: 0 }, { input_tokens: 0, images: 3 }]) {
      const answer = await world.tenant.post(
        '/v1/jobs',
        { wallet_id: world.walletId, model: world.model, provider: world.provider, limits },
        { 'idempotency-key': randomUUID() },
      );
      expectError(answer, 422, 'invalid_limits');
      expect(answer.body.error.message).toContain('reserve 0.000000');
    }
    expect(await countRows(db.pool, TABLES)).toEqual(before);
    const wallet = await world.tenant.get(`/v1/wallets/${world.walletId}`);
    expect(wallet.body.reserved).toBe('0.000000');
  });

  it('answers a republished identical price with the current version (200), creating none', async () => {
    const model = `model-${randomUUID().slice(0, 8)}`;
    const put = (unitPrices: Record<string, string>) => admin.request('PUT', `/v1/prices/${model}`, { currency: 'USD', unit_prices: unitPrices });
    const first = await put({ input_tokens: '1.00', output_tokens: '2.00' });
    expect(first.status).toBe(201);
    expect(first.body.version).toBe(1);
    // The same prices, spelled otherwise (key order, trailing zeros), are the same version.
    const again = await put({ output_tokens: '2.000000', input_tokens: '1' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const changed = await put({ input_tokens: '1.00', output_tokens: '2.50' });
    expect([changed.status, changed.body.version]).toEqual([201, 2]);
    const back = await put({ input_tokens: '1.00', output_tokens: '2.00' });
    expect([back.status, back.body.version]).toEqual([201, 3]);
    const versions = await db.pool.query('select count(*)::int as n from price_versions where model = $1', [model]);
    expect(versions.rows[0].n).toBe(3);
  });
});
