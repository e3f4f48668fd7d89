import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { startServer } from '../support/server.js';
import { Client, deliver, signDelivery } from '../support/client.js';
import { createWorld, submitJob } from '../support/world.js';

/**
 * Errors say what to do: `param` names the field at fault, the message the form it must
 * take or the values allowed; unknown fields are refused, never dropped; `metadata` is
 * the one free-form field, stored and returned.
 */

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 0 });
const admin = new Client(server.url);

function expectError(answer: { status: number; body: any }, status: number, code: string, param: string | undefined, message: RegExp) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.body.error.code).toBe(code);
  expect(answer.body.error.param).toBe(param);
  expect(answer.body.error.message).toMatch(message);
}

describe('validation messages', () => {
  it('an amount sent as a number says it must be a quoted decimal string', async () => {
    const world = await createWorld(admin);
    const answer = await admin.post(`/v1/wallets/${world.walletId}/credits`, { amount: 12.5 }, { 'idempotency-key': randomUUID() });
    expectError(answer, 400, 'invalid_amount', 'amount', /^amount must be a decimal string .*"12\.50".*not a number: send it quoted, "12\.5"$/);
  });

  it("an amount refused names its fault, whether the schema's pattern or the money parser refused it", async () => {
    const world = await createWorld(admin, { credit: '0' });
    const credit = (amount: string) => admin.post(`/v1/wallets/${world.walletId}/credits`, { amount }, { 'idempotency-key': randomUUID() });
    const tooLarge = /is too large: at most 10\^12 major units \(1000000000000\)$/;
    // 20 digits: refused by the pattern (at most 13), which used to say "at most 6 decimals".
    expectError(await credit('99999999999999999999'), 400, 'invalid_amount', 'amount', tooLarge);
    // 13 digits pass the pattern; the parser refuses them, in the same words.
    const parsed = await credit('9999999999999');
    expect(parsed.status).toBe(400);
    expect(parsed.body.error).toMatchObject({ code: 'invalid_amount', message: expect.stringMatching(tooLarge) });
    expectError(await credit('1.1234567'), 400, 'invalid_amount', 'amount', /^amount "1\.1234567" has more than 6 decimals$/);
    expectError(await credit('twelve'), 400, 'invalid_amount', 'amount', /^amount "twelve" is not a decimal string like "12\.50"$/);
    expectError(await credit('1e3'), 400, 'invalid_amount', 'amount', /^amount "1e3" must not use exponent notation$/);
    expectError(await credit('-5'), 400, 'invalid_amount', 'amount', /^amount "-5" must not be negative$/);
    // A unit price is named by its dimension; a grant's amount the same way as a credit's.
    const price = await admin.request('PUT', '/v1/prices/m-too-large', { currency: 'USD', unit_prices: { input_tokens: '99999999999999999999' } });
    expectError(price, 400, 'invalid_amount', 'unit_prices.input_tokens', /^unit_prices\.input_tokens "99999999999999999999" is too large/);
    const grant = await admin.post(`/v1/wallets/${world.walletId}/grants`, { amount: '99999999999999999999', category: 'paid' }, { 'idempotency-key': randomUUID() });
    expectError(grant, 400, 'invalid_amount', 'amount', tooLarge);
  });

  it('a missing field is named by itself, with its form', async () => {
    expectError(await admin.post('/v1/tenants', {}), 400, 'invalid_request', 'name', /^name is required: a string of 1 to 200 characters$/);
  });

  it('an unknown provider kind lists the kinds', async () => {
    const answer = await admin.post('/v1/providers', { name: 'p-kind', kind: 'stripe', secrets: ['whsec_x'] });
    expectError(answer, 400, 'invalid_request', 'kind', /^kind must be one of "generic", "replicate", "openai" or "fal" \(got "stripe"\)$/);
  });

  it('a nested field is named by its path, and a policy value by the allowed ones', async () => {
    const answer = await admin.post('/v1/providers', { name: 'p-policy', kind: 'generic', secrets: ['whsec_x'], policies: { failed_with_usage: 'bill' } });
    expectError(answer, 400, 'invalid_request', 'policies.failed_with_usage', /must be one of "release" or "capture" \(got "bill"\)/);
  });

  it('a unit price sent as a number is named by its dimension', async () => {
    const answer = await admin.request('PUT', '/v1/prices/m-err', { currency: 'USD', unit_prices: { input_tokens: 1 } });
    expectError(answer, 400, 'invalid_amount', 'unit_prices.input_tokens', /^unit_prices\.input_tokens must be a decimal string/);
  });

  it('a query parameter out of range says the range', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const answer = await world.tenant.get(`/v1/wallets/${world.walletId}/entries?limit=1000`);
    expectError(answer, 400, 'invalid_request', 'limit', /^the query parameter limit must be a whole number from 1 to 100 \(default 20\)$/);
  });

  it('a missing Idempotency-Key where required is idempotency_key_required, with the header as param', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const credit = await admin.post(`/v1/wallets/${world.walletId}/credits`, { amount: '1.00' });
    expectError(credit, 400, 'idempotency_key_required', 'Idempotency-Key', /requires an Idempotency-Key header/);
    const job = await world.tenant.post('/v1/jobs', { wallet_id: world.walletId, model: world.model, provider: world.provider, limits: { input_tokens: 1 } });
    expectError(job, 400, 'idempotency_key_required', 'Idempotency-Key', /requires an Idempotency-Key header/);
  });

  it('an unknown webhook event type lists the types', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const delivery = signDelivery({ type: 'job.finished', data: { job_id: randomUUID() } });
    const answer = await deliver(server.url, world.provider, delivery);
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('invalid_payload');
    expect(answer.body.error.message).toMatch(/^type must be one of "job\.started", .*"job\.completed".* \(got "job\.finished"\)$/);
  });
});

describe('unknown fields', () => {
  it('are refused on every route that takes a JSON body, naming the field and the accepted ones', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);
    const document = (await admin.get('/openapi.json')).body;
    const routes: [method: string, path: string][] = [];
    for (const [path, operations] of Object.entries<any>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        // A webhook body is the provider's: its unknown fields are accepted (below).
        if (operation.requestBody?.content?.['application/json'] && !path.startsWith('/v1/webhooks/')) routes.push([method.toUpperCase(), path]);
      }
    }
    expect(routes.length).toBeGreaterThanOrEqual(8);
    const ids: Record<string, string> = { id: job.id, model: 'm-unknown', provider: world.provider, event_key: 'e' };
    for (const [method, template] of routes) {
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(ids[name] ?? randomUUID()));
      let answer = await admin.request(method, path, { zzz_unknown: 1 }, { 'idempotency-key': randomUUID() });
      if (answer.status === 403) answer = await world.tenant.request(method, path, { zzz_unknown: 1 }, { 'idempotency-key': randomUUID() });
      expect(answer.status, `${method} ${template}: ${JSON.stringify(answer.body)}`).toBe(400);
      expect(answer.body.error.param, `${method} ${template}`).toBe('zzz_unknown');
      expect(answer.body.error.message).toMatch(/^zzz_unknown is not accepted here \(unknown field\); (accepted here: |no fields are accepted here$)/);
    }
  });

  it('are refused in a query string', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const answer = await world.tenant.get(`/v1/wallets/${world.walletId}/entries?limt=5`);
    expectError(answer, 400, 'invalid_request', 'limt', /accepted here: .*\blimit\b/);
  });

  it('a misspelt field is named, not reported as the required one missing', async () => {
    const world = await createWorld(admin);
    const answer = await admin.post(`/v1/wallets/${world.walletId}/credits`, { amont: '1.00' }, { 'idempotency-key': randomUUID() });
    expectError(answer, 400, 'invalid_request', 'amont', /^amont is not accepted here \(unknown field\); accepted here: amount, reference$/);
  });

  it('are accepted in webhook bodies, which belong to the provider', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);
    const delivery = signDelivery({ type: 'job.started', vendor_extra: { x: 1 }, data: { job_id: job.id, region: 'eu' } });
    expect((await deliver(server.url, world.provider, delivery)).status).toBe(200);
  });
});

describe('metadata', () => {
  it('is stored and returned on tenants, wallets and jobs', async () => {
    const tenant = await admin.post('/v1/tenants', { name: 'labelled', metadata: { crm_id: 'c-42' } });
    expect(tenant.status).toBe(201);
    expect(tenant.body.metadata).toEqual({ crm_id: 'c-42' });
    const client = admin.as(tenant.body.api_key);
    const wallet = await client.post('/v1/wallets', { currency: 'EUR', metadata: { plan: 'pro' } });
    expect(wallet.status).toBe(201);
    expect(wallet.body.metadata).toEqual({ plan: 'pro' });
    expect((await client.get(`/v1/wallets/${wallet.body.id}`)).body.metadata).toEqual({ plan: 'pro' });

    const world = await createWorld(admin);
    const job = await submitJob(world, undefined, { metadata: { order: 'ord_1', note: 'é ✓' } });
    expect((job as any).metadata).toEqual({ order: 'ord_1', note: 'é ✓' });
    expect((await world.tenant.get(`/v1/jobs/${job.id}`)).body.metadata).toEqual({ order: 'ord_1', note: 'é ✓' });
    const plain = await submitJob(world);
    expect((await world.tenant.get(`/v1/jobs/${plain.id}`)).body.metadata).toEqual({});
  });

  it('takes string values only, keys of at most 40 characters, at most 50 keys', async () => {
    expectError(await admin.post('/v1/tenants', { name: 'x', metadata: { n: 5 } }), 400, 'invalid_request', 'metadata.n', /^metadata\.n must be a string of at most 500 characters, not a whole number/);
    expectError(await admin.post('/v1/tenants', { name: 'x', metadata: { ['k'.repeat(41)]: 'v' } }), 400, 'invalid_request', 'metadata', /keys must each be a string of 1 to 40 characters/);
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    expectError(await admin.post('/v1/tenants', { name: 'x', metadata: many }), 400, 'invalid_request', 'metadata', /up to 50 keys/);
    expectError(await admin.post('/v1/tenants', { name: 'x', metadata: 'labels' }), 400, 'invalid_request', 'metadata', /^metadata must be an object of your own labels/);
  });
});
