import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { startServer, waitUntil } from '../support/server.js';
import { Client, TEST_SECRET, deliver, signDelivery, type SignedDelivery } from '../support/client.js';
import { completion, createWorld, submitJob, type World } from '../support/world.js';
import { countRows, expectError } from '../support/refusal.js';
import { openedProviderSecrets } from '../support/stored-secrets.js';

/**
 * Every refusal of the CONTRACT with its status and code, and proof that a refused
 * request stored and billed nothing: row counts before and after, and (for webhooks)
 * the same event id accepted afterwards, which it could not be had anything been kept.
 */

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 1 });
const admin = new Client(server.url);

const INTAKE_TABLES = ['webhook_events', 'delivery_attempts', 'settlements', 'ledger_entries', 'alerts'] as const;
const MONEY_TABLES = ['jobs', 'holds', 'settlements', 'ledger_entries', 'accounts'] as const;

const intakeCounts = () => countRows(db.pool, INTAKE_TABLES);
const moneyCounts = () => countRows(db.pool, MONEY_TABLES);

function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** Waits until the job's events are all settled and returns its view. */
async function settledJob(world: World, jobId: string, state: string) {
  let view: any;
  await waitUntil(async () => {
    view = (await world.tenant.get(`/v1/jobs/${jobId}`)).body;
    return view.state === state && view.events.length > 0 && view.events.every((e: any) => !['pending', 'processing'].includes(e.state));
  });
  return view;
}

function withHeaders(delivery: SignedDelivery, change: (headers: Record<string, string>) => void): SignedDelivery {
  const headers = { ...delivery.headers };
  change(headers);
  return { body: delivery.body, headers };
}

describe('webhook signatures', () => {
  it('refuses a missing, bad or stale signature with 401 invalid_signature and stores nothing', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);
    const body = completion(world, job.id, { input_tokens: 100, output_tokens: 10 });
    const eventId = `msg_${randomUUID()}`;
    const good = signDelivery(body, { id: eventId });
    const minutes = (n: number) => new Date(Date.now() + n * 60_000);
    const forged: [string, SignedDelivery][] = [
      ['no signature header', withHeaders(good, (h) => delete h['webhook-signature'])],
      ['no id header', withHeaders(good, (h) => delete h['webhook-id'])],
      ['no timestamp header', withHeaders(good, (h) => delete h['webhook-timestamp'])],
      ['empty signature', withHeaders(good, (h) => (h['webhook-signature'] = ''))],
      ['random signature', withHeaders(good, (h) => (h['webhook-signature'] = `v1,${randomBytes(32).toString('base64')}`))],
      ['signature of another secret', signDelivery(body, { id: eventId, secret: newSecret() })],
      ['another body under the signature', { body: JSON.stringify({ ...body, type: 'job.failed' }), headers: good.headers }],
      ['another id under the signature', withHeaders(good, (h) => (h['webhook-id'] = `msg_${randomUUID()}`))],
      ['another timestamp under the signature', withHeaders(good, (h) => (h['webhook-timestamp'] = String(Number(h['webhook-timestamp']) - 1)))],
      ['a timestamp that is not unix seconds', withHeaders(good, (h) => (h['webhook-timestamp'] = new Date().toISOString()))],
      ['signed 6 minutes ago', signDelivery(body, { id: eventId, timestamp: minutes(-6) })],
      ['signed 6 minutes in the future', signDelivery(body, { id: eventId, timestamp: minutes(6) })],
      ['signed an hour ago', signDelivery(body, { id: eventId, timestamp: minutes(-60) })],
    ];
    const before = await intakeCounts();
    for (const [what, delivery] of forged) {
      const answer = await deliver(server.url, world.provider, delivery);
      expect.soft(answer.status, what).toBe(401);
      expectError(answer, 401, 'invalid_signature');
    }
    expect(await intakeCounts()).toEqual(before);

    // The tolerance is five minutes both ways, not less: 4 minutes off still verifies.
    // The same event id is new to Tally, so nothing of the refused deliveries was kept.
    const late = await deliver(server.url, world.provider, signDelivery(body, { id: eventId, timestamp: minutes(-4) }));
    expect(late.status).toBe(200);
    expect(late.body).toEqual({ status: 'accepted', event_key: eventId });
    const early = await deliver(server.url, world.provider, signDelivery(completion(world, job.id, { input_tokens: 1 }, 'job.progress'), { timestamp: minutes(4) }));
    expect(early.body.status).toBe('accepted');
    const view = await settledJob(world, job.id, 'captured');
    expect(view.settlements.map((s: any) => s.amount)).toEqual(['0.000120']);
  });

  it('accepts any one valid signature of a space-separated list', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);
    const good = signDelivery(completion(world, job.id, { input_tokens: 10 }, 'job.started'));
    const listed = withHeaders(good, (h) => (h['webhook-signature'] = `v1,${randomBytes(32).toString('base64')} ${h['webhook-signature']}`));
    expect((await deliver(server.url, world.provider, listed)).body.status).toBe('accepted');
  });

  it('accepts old and new secrets during a rotation, and refuses the old one once it is removed', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);
    const fresh = newSecret();
    const progress = () => completion(world, job.id, { input_tokens: 1 }, 'job.progress');

    const rotating = await admin.request('PATCH', `/v1/providers/${world.provider}`, { secrets: [fresh, TEST_SECRET] });
    expect(rotating.status).toBe(200);
    for (const secret of [fresh, TEST_SECRET]) {
      const answer = await deliver(server.url, world.provider, signDelivery(progress(), { secret }));
      expect(answer.status).toBe(200);
      expect(answer.body.status).toBe('accepted');
    }

    const rotated = await admin.request('PATCH', `/v1/providers/${world.provider}`, { secrets: [fresh] });
    expect(rotated.status).toBe(200);
    const before = await intakeCounts();
    const old = await deliver(server.url, world.provider, signDelivery(progress(), { secret: TEST_SECRET }));
    expectError(old, 401, 'invalid_signature');
    expect(await intakeCounts()).toEqual(before);
    const current = await deliver(server.url, world.provider, signDelivery(progress(), { secret: fresh }));
    expect(current.body.status).toBe('accepted');
  });
});

describe('webhook payloads', () => {
  it('refuses malformed and invalid payloads with 400 invalid_payload and stores nothing', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);
    const data = { job_id: job.id, tenant_id: world.tenantId, model: world.model, currency: 'USD' };
    const event = (type: string, extra: Record<string, unknown> = {}, base: Record<string, unknown> = data) => ({
      type,
      timestamp: new Date().toISOString(),
      data: { ...base, ...extra },
    });
    const { job_id: _jobId, ...withoutJobId } = data;
    const invalid: [string, unknown][] = [
      ['malformed JSON', '{"type": "job.completed", "data": {'],
      ['an empty body', ''],
      ['a JSON array', '[]'],
      ['a JSON string', '"job.completed"'],
      ['JSON null', 'null'],
      ['no type', { data: { ...data, usage: { input_tokens: 1 } } }],
      ['an unknown type', event('job.exploded', { usage: { input_tokens: 1 } })],
      ['a type of another case', event('JOB.COMPLETED', { usage: { input_tokens: 1 } })],
      ['no data', { type: 'job.completed' }],
      ['neither job_id nor provider_job_ref', event('job.completed', { usage: { input_tokens: 1 } }, withoutJobId)],
      ['negative usage', event('job.completed', { usage: { input_tokens: -1 } })],
      ['fractional usage', event('job.completed', { usage: { input_tokens: 1.5 } })],
      ['string usage', event('job.completed', { usage: { input_tokens: '100' } })],
      ['usage of 2^53', event('job.completed', { usage: { input_tokens: 2 ** 53 } })],
      ['usage that is not an object', event('job.completed', { usage: [100] })],
      ['a completion without usage', event('job.completed')],
      ['a completion with null usage', event('job.completed', { usage: null })],
      ['a correction without number', event('job.usage_corrected', { usage: { input_tokens: 1 } })],
      ['a correction numbered 0', event('job.usage_corrected', { usage: { input_tokens: 1 }, correction: 0 })],
      ['a fractional correction', event('job.usage_corrected', { usage: { input_tokens: 1 }, correction: 1.5 })],
      ['a correction without usage', event('job.usage_corrected', { correction: 1 })],
    ];
    const eventId = `msg_${randomUUID()}`;
    const before = await intakeCounts();
    for (const [what, body] of invalid) {
      const answer = await deliver(server.url, world.provider, signDelivery(body, { id: eventId }));
      expect.soft(answer.status, what).toBe(400);
      expectError(answer, 400, 'invalid_payload');
    }
    expect(await intakeCounts()).toEqual(before);

    // Nothing was stored under the event id: a valid body with it is a first delivery.
    const valid = await deliver(server.url, world.provider, signDelivery(event('job.completed', { usage: { input_tokens: 2 ** 53 - 1 } }), { id: eventId }));
    expect(valid.body).toEqual({ status: 'accepted', event_key: eventId });
  });

  it('answers 404 unknown_job for a job it cannot resolve, storing nothing', async () => {
    const world = await createWorld(admin);
    const other = await createWorld(admin);
    const othersJob = await submitJob(other);
    const usage = { input_tokens: 1 };
    const unknown: [string, unknown][] = [
      ['an unknown job id', { type: 'job.completed', data: { job_id: randomUUID(), usage } }],
      ['a job id that is no uuid', { type: 'job.completed', data: { job_id: 'job-123', usage } }],
      ['an unknown provider_job_ref', { type: 'job.completed', data: { provider_job_ref: `pj_${randomUUID()}`, usage } }],
      ['a job of another provider', { type: 'job.completed', data: { job_id: othersJob.id, usage } }],
    ];
    const before = await intakeCounts();
    for (const [what, body] of unknown) {
      const answer = await deliver(server.url, world.provider, signDelivery(body));
      expect.soft(answer.status, what).toBe(404);
      expectError(answer, 404, 'unknown_job');
    }
    expect(await intakeCounts()).toEqual(before);
  });

  it('refuses an event whose tenant, model, currency or provider job ref disagrees: 422 event_mismatch, recorded, nothing billed', async () => {
    const world = await createWorld(admin);
    const other = await createWorld(admin);
    const ref = `pj_${randomUUID()}`;
    const job = await submitJob(world, undefined, { provider_job_ref: ref });
    const usage = { input_tokens: 1000, output_tokens: 100 };
    const mismatches: [string, Record<string, unknown>][] = [
      ['tenant_id', { tenant_id: other.tenantId }],
      ['model', { model: other.model }],
      ['currency', { currency: 'EUR' }],
      ['provider_job_ref', { provider_job_ref: `pj_${randomUUID()}` }],
    ];
    for (const [field, change] of mismatches) {
      const eventId = `msg_${randomUUID()}`;
      const before = await countRows(db.pool, ['webhook_events', 'settlements', 'ledger_entries', 'holds']);
      const answer = await deliver(server.url, world.provider, signDelivery(completion(world, job.id, usage, 'job.completed', change), { id: eventId }));
      expectError(answer, 422, 'event_mismatch');
      expect(answer.body.error.message).toContain(field);
      expect(await countRows(db.pool, ['webhook_events', 'settlements', 'ledger_entries', 'holds'])).toEqual(before);
      const attempts = await db.pool.query('select outcome, job_id from delivery_attempts where provider = $1 and event_key = $2', [world.provider, eventId]);
      expect(attempts.rows).toEqual([{ outcome: 'event_mismatch', job_id: job.id }]);
    }
    // Resolved by provider_job_ref alone, a mismatch is caught the same way.
    const byRef = await deliver(server.url, world.provider, signDelivery({ type: 'job.completed', data: { provider_job_ref: ref, model: other.model, usage } }));
    expectError(byRef, 422, 'event_mismatch');

    const view = (await world.tenant.get(`/v1/jobs/${job.id}`)).body;
    expect(view).toMatchObject({ state: 'reserved', captured: '0.000000', settlements: [], events: [] });
    const wallet = (await world.tenant.get(`/v1/wallets/${world.walletId}`)).body;
    expect(wallet).toMatchObject({ balance: '1000.000000', reserved: job.reserved });
    // The job is not poisoned: a matching completion settles normally.
    await deliver(server.url, world.provider, signDelivery(completion(world, job.id, usage, 'job.completed', { provider_job_ref: ref })));
    expect((await settledJob(world, job.id, 'captured')).captured).toBe('0.001200');
  });

  it('refuses the same event id with another body: 409 event_key_conflict, recorded; the first event settles normally', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);
    const eventId = `msg_${randomUUID()}`;
    const original = signDelivery(completion(world, job.id, { input_tokens: 1000 }), { id: eventId });
    const first = await deliver(server.url, world.provider, original);
    expect(first.body).toEqual({ status: 'accepted', event_key: eventId });
    const before = await countRows(db.pool, ['webhook_events', 'settlements', 'ledger_entries']);
    const conflicting = [
      completion(world, job.id, { input_tokens: 9000 }),
      completion(world, job.id, { input_tokens: 1000 }, 'job.failed'),
      // The same JSON value, other bytes: the hash is over the raw body.
      `${JSON.stringify(completion(world, job.id, { input_tokens: 1000 }))} `,
    ];
    for (const body of conflicting) {
      const answer = await deliver(server.url, world.provider, signDelivery(body, { id: eventId }));
      expectError(answer, 409, 'event_key_conflict');
    }
    const webhookEvents = await db.pool.query<{ n: number }>('select count(*)::int as n from webhook_events where event_key = $1', [eventId]);
    expect(webhookEvents.rows[0]!.n).toBe(1);
    const deliveries = (await world.tenant.get(`/v1/jobs/${job.id}`)).body.deliveries.filter((d: any) => d.event_key === eventId);
    expect(deliveries.map((d: any) => d.outcome)).toEqual(['accepted', 'event_key_conflict', 'event_key_conflict', 'event_key_conflict']);

    const view = await settledJob(world, job.id, 'captured');
    expect(view.settlements.map((s: any) => [s.charge_type, s.amount])).toEqual([['capture', '0.001000']]);
    expect(view.events.map((e: any) => [e.event_key, e.state])).toEqual([[eventId, 'applied']]);
    const after = await countRows(db.pool, ['webhook_events', 'settlements', 'ledger_entries']);
    expect(after.webhook_events).toBe(before.webhook_events);
    // A redelivery of the first body is still a plain duplicate.
    const again = await deliver(server.url, world.provider, signDelivery(original.body, { id: eventId }));
    expect(again.body).toEqual({ status: 'already_accepted', event_key: eventId });
  });

  it('answers 413 for a body over 1 MiB, storing nothing, and accepts one just under', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);
    const base = JSON.stringify(completion(world, job.id, { input_tokens: 5 }, 'job.progress', { padding: '' }));
    const padded = (size: number) => base.replace('"padding":""', `"padding":"${'x'.repeat(size - base.length)}"`);
    const before = await intakeCounts();
    const tooLarge = await deliver(server.url, world.provider, signDelivery(padded(1024 * 1024 + 1)));
    expect(tooLarge.status).toBe(413);
    expectError(tooLarge, 413, tooLarge.body.error.code);
    expect(await intakeCounts()).toEqual(before);
    const fits = await deliver(server.url, world.provider, signDelivery(padded(1024 * 1024)));
    expect(fits.status).toBe(200);
    expect(fits.body.status).toBe('accepted');
  });

  it('ignores an amount in the payload: the capture is the price of the usage', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);
    const body = {
      ...completion(world, job.id, { input_tokens: 3000, output_tokens: 500 }, 'job.completed', { amount: '0.020000', price: '0.02', cost: 0.02 }),
      amount: '5.00',
    };
    expect((await deliver(server.url, world.provider, signDelivery(body))).body.status).toBe('accepted');
    const view = await settledJob(world, job.id, 'captured');
    // 3000 × 1.00/1M + 500 × 2.00/1M = 0.004
    expect(view).toMatchObject({ captured: '0.004000', released: '0.016000' });
    expect((await world.tenant.get(`/v1/wallets/${world.walletId}`)).body.balance).toBe('999.996000');
  });
});

describe('API refusals', () => {
  it('refuses invalid credit amounts with 400 invalid_amount and writes no entry', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const amounts: unknown[] = [
      '1e3', '1.0000001', '-1', '0', '0.000000', ' 1', '1 ', '1,0', '1,000.00', 12, 12.5, '0x10', '+1', '01', '1.', '.5', '',
      '10000000000000.000000', '1000000000000.000001', null, ['1'], { value: '1' },
    ];
    const before = await countRows(db.pool, ['ledger_entries', 'idempotency_keys']);
    for (const amount of amounts) {
      const answer = await admin.post(`/v1/wallets/${world.walletId}/credits`, { amount }, { 'idempotency-key': randomUUID() });
      expect.soft(answer.status, JSON.stringify(amount)).toBe(400);
      expectError(answer, 400, 'invalid_amount');
    }
    const missing = await admin.post(`/v1/wallets/${world.walletId}/credits`, {}, { 'idempotency-key': randomUUID() });
    expect(missing.status).toBe(400);
    expect(await countRows(db.pool, ['ledger_entries', 'idempotency_keys'])).toEqual(before);
    expect((await world.tenant.get(`/v1/wallets/${world.walletId}`)).body.balance).toBe('0.000000');

    // The largest amount the contract allows is accepted.
    const largest = await admin.post(`/v1/wallets/${world.walletId}/credits`, { amount: '1000000000000.000000' }, { 'idempotency-key': randomUUID() });
    expect(largest.status).toBe(201);
    expect(largest.body.amount).toBe('1000000000000.000000');
  });

  it('refuses a job the wallet cannot cover with 402 insufficient_funds and writes nothing', async () => {
    const world = await createWorld(admin, { credit: '0.020000' });
    const first = await submitJob(world, { input_tokens: 10_000, output_tokens: 4_000 }); // 0.018
    expect(first.reserved).toBe('0.018000');
    const walletBefore = (await world.tenant.get(`/v1/wallets/${world.walletId}`)).body;
    const before = await moneyCounts();
    const refused = await world.tenant.post(
      '/v1/jobs',
      { wallet_id: world.walletId, model: world.model, provider: world.provider, limits: { input_tokens: 1_001, output_tokens: 500 } }, // 0.002001
      { 'idempotency-key': randomUUID() },
    );
    expectError(refused, 402, 'insufficient_funds');
    expect(await moneyCounts()).toEqual(before);
    expect((await world.tenant.get(`/v1/wallets/${world.walletId}`)).body).toEqual(walletBefore);
    // Exactly the available amount is enough.
    const exact = await submitJob(world, { input_tokens: 1_000, output_tokens: 500 });
    expect(exact.reserved).toBe('0.002000');
    expect((await world.tenant.get(`/v1/wallets/${world.walletId}`)).body).toMatchObject({ available: '0.000000', reserved: '0.020000' });
  });

  it('refuses a model without a price in the wallet\'s currency (422 no_price), an unknown provider and another tenant\'s wallet (404)', async () => {
    const world = await createWorld(admin);
    const other = await createWorld(admin);
    const eurOnly = `model-eur-${randomUUID().slice(0, 8)}`;
    expect((await admin.request('PUT', `/v1/prices/${eurOnly}`, { currency: 'EUR', unit_prices: { input_tokens: '1.00' } })).status).toBe(201);
    const job = (changes: Record<string, unknown>) =>
      world.tenant.post(
        '/v1/jobs',
        { wallet_id: world.walletId, model: world.model, provider: world.provider, limits: { input_tokens: 1000 }, ...changes },
        { 'idempotency-key': randomUUID() },
      );
    const before = await moneyCounts();
    expectError(await job({ model: `no-such-model-${randomUUID()}` }), 422, 'no_price');
    expectError(await job({ model: eurOnly }), 422, 'no_price');
    expectError(await job({ provider: `no-such-provider-${randomUUID().slice(0, 8)}` }), 404, 'not_found');
    expectError(await job({ wallet_id: other.walletId }), 404, 'not_found');
    expectError(await job({ wallet_id: randomUUID() }), 404, 'not_found');
    expect(await moneyCounts()).toEqual(before);
  });

  it('takes model names up to 200 characters, with "/" encoded as %2F, and refuses longer ones', async () => {
    const longest = `org/${'m'.repeat(196)}`;
    const world = await createWorld(admin, { model: longest });
    const job = await submitJob(world, { input_tokens: 1000 });
    expect(job.reserved).toBe('0.001000');
    const before = await countRows(db.pool, ['price_versions']);
    const tooLong = await admin.request('PUT', `/v1/prices/${encodeURIComponent(`${longest}m`)}`, { currency: 'USD', unit_prices: { input_tokens: '1.00' } });
    expect(tooLong.status).toBe(400);
    expectError(tooLong, 400, tooLong.body.error.code);
    expect(await countRows(db.pool, ['price_versions'])).toEqual(before);
  });

  it('refuses a second wallet in a currency (409 wallet_exists) and a second provider of a name (409 provider_exists)', async () => {
    const world = await createWorld(admin);
    const before = await countRows(db.pool, ['accounts', 'providers']);
    expectError(await world.tenant.post('/v1/wallets', { currency: 'USD' }), 409, 'wallet_exists');
    expectError(await admin.post('/v1/providers', { name: world.provider, kind: 'generic', secrets: [newSecret()] }), 409, 'provider_exists');
    expect(await countRows(db.pool, ['accounts', 'providers'])).toEqual(before);
    expect(await openedProviderSecrets(db.pool, world.provider)).toEqual([TEST_SECRET]);
    // Another currency is another wallet.
    expect((await world.tenant.post('/v1/wallets', { currency: 'EUR' })).status).toBe(201);
  });

  it('sets a job\'s provider_job_ref once (409 provider_job_ref_set), unique per provider (409 provider_job_ref_taken)', async () => {
    const world = await createWorld(admin);
    const other = await createWorld(admin);
    const first = await submitJob(world);
    const second = await submitJob(world);
    const patch = (w: World, id: string, ref: string) => w.tenant.request('PATCH', `/v1/jobs/${id}`, { provider_job_ref: ref });
    const ref = `pj_${randomUUID()}`;

    const set = await patch(world, first.id, ref);
    expect(set.status).toBe(200);
    expect(set.body.provider_job_ref).toBe(ref);
    expect((await patch(world, first.id, ref)).status).toBe(200); // the same value again is no change
    expectError(await patch(world, first.id, `pj_${randomUUID()}`), 409, 'provider_job_ref_set');
    expectError(await patch(world, second.id, ref), 409, 'provider_job_ref_taken');
    expect((await world.tenant.get(`/v1/jobs/${first.id}`)).body.provider_job_ref).toBe(ref);
    expect((await world.tenant.get(`/v1/jobs/${second.id}`)).body.provider_job_ref).toBeNull();

    const before = await moneyCounts();
    const taken = await world.tenant.post(
      '/v1/jobs',
      { wallet_id: world.walletId, model: world.model, provider: world.provider, provider_job_ref: ref, limits: { input_tokens: 1000 } },
      { 'idempotency-key': randomUUID() },
    );
    expectError(taken, 409, 'provider_job_ref_taken');
    expect(await moneyCounts()).toEqual(before);

    // Whoever's job has it: another tenant of the provider is refused too (the key includes
    // tenant_id since migrations/0023, so the writers keep this across tenants).
    const tenant = await admin.post('/v1/tenants', { name: `tenant-${randomUUID().slice(0, 8)}` });
    const theirs = admin.as(tenant.body.api_key);
    const wallet = await theirs.post('/v1/wallets', { currency: 'USD' });
    expect((await admin.post(`/v1/wallets/${wallet.body.id}/credits`, { amount: '10.00' }, { 'idempotency-key': randomUUID() })).status).toBe(201);
    const job = { wallet_id: wallet.body.id, model: world.model, provider: world.provider, limits: { input_tokens: 1000 } };
    const theirJob = await theirs.post('/v1/jobs', job, { 'idempotency-key': randomUUID() });
    expect(theirJob.status).toBe(201);
    expectError(await theirs.request('PATCH', `/v1/jobs/${theirJob.body.id}`, { provider_job_ref: ref }), 409, 'provider_job_ref_taken');
    expectError(await theirs.post('/v1/jobs', { ...job, provider_job_ref: ref }, { 'idempotency-key': randomUUID() }), 409, 'provider_job_ref_taken');

    // Unique per provider: another provider's job may carry the same ref.
    const elsewhere = await submitJob(other);
    expect((await patch(other, elsewhere.id, ref)).status).toBe(200);
  });

  it('refuses to cancel a terminal job with 409 job_terminal', async () => {
    const world = await createWorld(admin);
    const captured = await submitJob(world);
    const released = await submitJob(world);
    const open = await submitJob(world);
    await deliver(server.url, world.provider, signDelivery(completion(world, captured.id, { input_tokens: 100 })));
    await deliver(server.url, world.provider, signDelivery(completion(world, released.id, {}, 'job.failed')));
    await settledJob(world, captured.id, 'captured');
    await settledJob(world, released.id, 'released');

    for (const job of [captured, released]) {
      const before = await moneyCounts();
      expectError(await world.tenant.post(`/v1/jobs/${job.id}/cancel`), 409, 'job_terminal');
      expect(await moneyCounts()).toEqual(before);
    }
    const cancel = await world.tenant.post(`/v1/jobs/${open.id}/cancel`);
    expect(cancel.status).toBe(202);
    expect(cancel.body.state).toBe('cancel_requested');
    expect((await world.tenant.post(`/v1/jobs/${open.id}/cancel`)).status).toBe(202);
  });
});
