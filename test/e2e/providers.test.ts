import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/transaction.js';
import { Client, TEST_SECRET, deliver, signDelivery, type Answer } from '../support/client.js';
import { freshDatabase } from '../support/database.js';
import { FakeProviderApi, HeldAnswer } from '../support/fake-provider-api.js';
import { startServer, waitUntil } from '../support/server.js';

/**
 * The named adapters end to end: a real `tally serve` process, signed deliveries built
 * from the providers' published samples (fresh ids per test), and — for OpenAI and fal,
 * whose webhooks carry no usage — a fake provider API in this process that the worker
 * fetches from.
 */
const FETCH_TIMEOUT_MS = 3_000;
const OPENAI_KEY = `sk-e2e-${randomUUID()}`;
const FAL_KEY = `fal-e2e-${randomUUID()}`;

const db = await freshDatabase();
const api = await FakeProviderApi.start();
const server = await startServer(db.url, {
  workers: 1,
  env: { TALLY_USAGE_FETCH_TIMEOUT_MS: String(FETCH_TIMEOUT_MS), TALLY_RECONCILE_INTERVAL_SECONDS: '0', LOG_LEVEL: 'info' },
});
const admin = new Client(server.url);

function fixture<T = any>(name: string): T {
  return JSON.parse(fixtureText(name)) as T;
}
function fixtureText(name: string): string {
  return readFileSync(new URL(`../fixtures/providers/${name}`, import.meta.url), 'utf8');
}
const fresh = (prefix: string) => `${prefix}${randomUUID().replaceAll('-', '')}`;

interface NamedWorld {
  tenant: Client;
  provider: string;
  model: string;
  walletId: string;
  providerAnswer: Answer;
}

/** Tenant, a provider of `kind`, a price for `model`, a wallet credited 100.00 — over the API. */
async function namedWorld(kind: string, settings: Record<string, unknown>, model: string, unitPrices: Record<string, string>): Promise<NamedWorld> {
  const suffix = randomUUID().slice(0, 8);
  const tenant = await admin.post('/v1/tenants', { name: `tenant-${suffix}` });
  expect(tenant.status).toBe(201);
  const provider = `${kind}-${suffix}`;
  const providerAnswer = await admin.post('/v1/providers', { name: provider, kind, ...settings });
  expect(providerAnswer.status, JSON.stringify(providerAnswer.body)).toBe(201);
  const price = await admin.request('PUT', `/v1/prices/${encodeURIComponent(model)}`, { currency: 'USD', unit_prices: unitPrices });
  expect([200, 201], 'the first PUT creates the price; the same prices again answer its version').toContain(price.status);
  const tenantClient = admin.as(tenant.body.api_key);
  const wallet = await tenantClient.post('/v1/wallets', { currency: 'USD' });
  expect(wallet.status).toBe(201);
  const credit = await admin.post(`/v1/wallets/${wallet.body.id}/credits`, { amount: '100.00' }, { 'idempotency-key': `credit-${suffix}` });
  expect(credit.status).toBe(201);
  return { tenant: tenantClient, provider, model, walletId: wallet.body.id, providerAnswer };
}

async function submit(world: NamedWorld, ref: string, limits: Record<string, number>, reserved: string): Promise<string> {
  const job = await world.tenant.post(
    '/v1/jobs',
    { wallet_id: world.walletId, model: world.model, provider: world.provider, provider_job_ref: ref, limits },
    { 'idempotency-key': randomUUID() },
  );
  expect(job.status, JSON.stringify(job.body)).toBe(201);
  expect(job.body).toMatchObject({ state: 'reserved', reserved });
  return job.body.id;
}

async function jobView(world: NamedWorld, jobId: string) {
  const view = await world.tenant.get(`/v1/jobs/${jobId}`);
  expect(view.status).toBe(200);
  return view.body;
}

/** Waits for the job to reach `state` with `events` events, all settled; returns the view. */
async function settled(world: NamedWorld, jobId: string, state: string, events: number) {
  let view: any;
  try {
    await waitUntil(async () => {
      view = await jobView(world, jobId);
      return view.state === state && view.events.length === events && view.events.every((e: any) => !['pending', 'processing'].includes(e.state));
    });
  } catch (error) {
    throw new Error(`job ${jobId} did not settle as ${state}: ${JSON.stringify(view)}`, { cause: error });
  }
  return view;
}

async function walletOf(world: NamedWorld) {
  return (await world.tenant.get(`/v1/wallets/${world.walletId}`)).body;
}

async function expectAccepted(answer: Answer, status: 'accepted' | 'already_accepted' = 'accepted'): Promise<string> {
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.body.status).toBe(status);
  return answer.body.event_key;
}

async function eventRows(jobId: string) {
  const result = await db.pool.query(
    'select event_key, state, reason, usage, attempts, fetch_attempts, last_error from webhook_events where job_id = $1 order by seq',
    [jobId],
  );
  return result.rows;
}

async function settlementCount(jobId: string): Promise<number> {
  return (await db.pool.query('select count(*)::int as n from settlements where job_id = $1', [jobId])).rows[0].n;
}

/**
 * While the worker waits for the provider: no Tally session sits in a transaction, and
 * nobody holds the job's or its events' row locks (FOR UPDATE NOWAIT would fail at once).
 */
async function expectNoTransactionOpen(jobId: string) {
  const sessions = await db.pool.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name like 'tally%'`,
  );
  expect(sessions.rows[0]!.n, 'the server is connected').toBeGreaterThan(0);
  const inTransaction = await db.pool.query(
    `select pid, application_name, state, query from pg_stat_activity
     where datname = current_database() and pid <> pg_backend_pid() and application_name like 'tally%'
       and (state like 'idle in transaction%' or (state = 'active' and query ilike '%for update%'))`,
  );
  expect(inTransaction.rows).toEqual([]);
  await withTransaction(db.pool, async (tx) => {
    await tx.query('select 1 from jobs where id = $1 for update nowait', [jobId]);
    await tx.query('select 1 from webhook_events where job_id = $1 for update nowait', [jobId]);
  });
}

async function reconciliationExceptions() {
  const run = await admin.post('/v1/reconciliation/runs', {});
  expect(run.status).toBe(201);
  return run.body.exceptions as { class: string; objects: Record<string, unknown> }[];
}

describe('replicate', () => {
  // predict_ms at 10.00 per 1,000,000 ms; 60 s of limits reserve 0.600000
  const LIMITS = { predict_ms: 60_000 };
  const succeeded = fixture('replicate-prediction-succeeded.json');
  const starting = fixture('replicate-prediction-starting.json');
  let world: NamedWorld;
  let capturing: NamedWorld;

  beforeAll(async () => {
    const model = `owner-${randomUUID().slice(0, 8)}/hello-world`;
    world = await namedWorld('replicate', { secrets: [TEST_SECRET] }, model, { predict_ms: '10.00' });
    capturing = await namedWorld('replicate', { secrets: [TEST_SECRET], policies: { failed_with_usage: 'capture' } }, model, { predict_ms: '10.00' });
  });

  const prediction = (w: NamedWorld, id: string, status: string, metrics: unknown) => ({
    ...succeeded,
    id,
    model: w.model,
    status,
    metrics,
    urls: { get: `https://api.replicate.com/v1/predictions/${id}`, cancel: `https://api.replicate.com/v1/predictions/${id}/cancel` },
  });
  const send = (w: NamedWorld, body: unknown, id?: string) => deliver(server.url, w.provider, signDelivery(body, id ? { id } : {}));

  it('captures a succeeded prediction at predict_ms × price; duplicates and re-emissions bill once', async () => {
    const ref = fresh('p');
    const jobId = await submit(world, ref, LIMITS, '0.600000');
    await expectAccepted(await send(world, { ...starting, id: ref }));
    await settled(world, jobId, 'running', 1);

    const body = prediction(world, ref, 'succeeded', { predict_time: 4.0005, total_time: 4.2 });
    const delivery = signDelivery(body);
    const key = await expectAccepted(await deliver(server.url, world.provider, delivery));
    expect(key).toBe(delivery.headers['webhook-id']);
    expect(await expectAccepted(await deliver(server.url, world.provider, delivery), 'already_accepted')).toBe(key);
    await expectAccepted(await send(world, body)); // the same prediction re-emitted under a new webhook-id

    const view = await settled(world, jobId, 'captured', 3);
    // 4.0005 s = 4001 ms (half-up, exact: 4.0005 × 1000 in floating point rounds to 4000) × 10.00 / 1,000,000
    expect(view).toMatchObject({ captured: '0.040010', released: '0.559990' });
    expect(view.settlements).toHaveLength(1);
    expect(view.events.map((e: any) => [e.type, e.state, e.reason])).toEqual([
      ['job.started', 'applied', null],
      ['job.completed', 'applied', null],
      ['job.completed', 'no_effect', 'job_already_captured'],
    ]);
    expect(await settlementCount(jobId)).toBe(1);
    expect(await walletOf(world)).toMatchObject({ reserved: '0.000000' });
  });

  it('releases a failed prediction with or without metrics under the default policy; captures it under failed_with_usage=capture', async () => {
    const bare = fresh('p');
    const timed = fresh('p');
    const bareJob = await submit(world, bare, LIMITS, '0.600000');
    const timedJob = await submit(world, timed, LIMITS, '0.600000');
    await expectAccepted(await send(world, prediction(world, bare, 'failed', {})));
    await expectAccepted(await send(world, prediction(world, timed, 'failed', { predict_time: 2.5 })));
    expect(await settled(world, bareJob, 'released', 1)).toMatchObject({ captured: '0.000000', released: '0.600000' });
    expect(await settled(world, timedJob, 'released', 1)).toMatchObject({ captured: '0.000000', released: '0.600000' });

    const billed = fresh('p');
    const free = fresh('p');
    const billedJob = await submit(capturing, billed, LIMITS, '0.600000');
    const freeJob = await submit(capturing, free, LIMITS, '0.600000');
    await expectAccepted(await send(capturing, prediction(capturing, billed, 'failed', { predict_time: 2.5 })));
    await expectAccepted(await send(capturing, prediction(capturing, free, 'failed', {})));
    expect(await settled(capturing, billedJob, 'captured', 1)).toMatchObject({ captured: '0.025000', released: '0.575000' });
    expect(await settled(capturing, freeJob, 'released', 1)).toMatchObject({ captured: '0.000000', released: '0.600000' });
  });

  it('captures a canceled prediction\'s reported time and releases one without', async () => {
    const timed = fresh('p');
    const bare = fresh('p');
    const timedJob = await submit(world, timed, LIMITS, '0.600000');
    const bareJob = await submit(world, bare, LIMITS, '0.600000');
    await expectAccepted(await send(world, prediction(world, timed, 'canceled', { predict_time: 0.0125 })));
    await expectAccepted(await send(world, prediction(world, bare, 'canceled', {})));
    expect(await settled(world, timedJob, 'captured', 1)).toMatchObject({ captured: '0.000130', released: '0.599870' });
    expect(await settled(world, bareJob, 'released', 1)).toMatchObject({ released: '0.600000' });
  });

  it('refuses a prediction of another model (event_mismatch), a forged signature and an unknown prediction; nothing is billed', async () => {
    const ref = fresh('p');
    const jobId = await submit(world, ref, LIMITS, '0.600000');
    const other = { ...prediction(world, ref, 'succeeded', { predict_time: 1 }), model: 'someone/else' };
    const mismatch = await send(world, other);
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.error.code).toBe('event_mismatch');
    const forged = signDelivery(prediction(world, ref, 'succeeded', { predict_time: 1 }), { secret: 'whsec_dGhpcyBpcyBub3QgdGhlIHNlY3JldA==' });
    expect((await deliver(server.url, world.provider, forged)).status).toBe(401);
    expect((await send(world, prediction(world, fresh('p'), 'succeeded', { predict_time: 1 }))).status).toBe(404);
    const view = await jobView(world, jobId);
    expect(view).toMatchObject({ state: 'reserved', events: [], settlements: [] });
    const exceptions = await reconciliationExceptions();
    expect(exceptions.some((e) => e.class === 'event_mismatch' && e.objects['job_id'] === jobId)).toBe(true);
  });
});

describe('openai', () => {
  // input 1.00, cached input 0.50, output 2.00 per 1M tokens; limits reserve 0.025000
  const LIMITS = { input_tokens: 10_000, cached_input_tokens: 10_000, output_tokens: 5_000 };
  const PRICES = { input_tokens: '1.00', cached_input_tokens: '0.50', output_tokens: '2.00' };
  let world: NamedWorld;
  let capturing: NamedWorld;

  beforeAll(async () => {
    const model = `gpt-e2e-${randomUUID().slice(0, 8)}`;
    const settings = { secrets: [TEST_SECRET], api_key: OPENAI_KEY, base_url: api.url };
    world = await namedWorld('openai', settings, model, PRICES);
    capturing = await namedWorld('openai', { ...settings, policies: { failed_with_usage: 'capture' } }, model, PRICES);
  });

  /** The published webhook example with this test's ids. */
  function webhook(type: string, objectId: string) {
    const sample = fixture(type.startsWith('batch.') ? 'openai-webhook-batch.completed.json' : 'openai-webhook-response.completed.json');
    return { ...sample, id: fresh('evt_'), type, data: { id: objectId } };
  }
  /** The published GET /v1/responses/{id} example (usage 32 in, 0 cached, 18 out) as this job's. */
  function responseObject(w: NamedWorld, id: string, over: Record<string, unknown> = {}) {
    return { ...fixture('openai-response-object-completed.json'), id, model: `${w.model}-2025-01-31`, ...over };
  }
  /** The published batch example (1500 in of which 1024 cached, 500 out) as this job's. */
  function batchObject(w: NamedWorld, id: string, over: Record<string, unknown> = {}) {
    return { ...fixture('openai-batch-object.json'), id, model: w.model, ...over };
  }
  const send = (w: NamedWorld, body: unknown, id?: string) => deliver(server.url, w.provider, signDelivery(body, id ? { id } : {}));

  it('waits in usage_pending through a 500, a timeout and a slow answer, with no transaction open; then captures once', async () => {
    const ref = fresh('resp_');
    const path = `/v1/responses/${ref}`;
    const hang = new HeldAnswer();
    const slow = new HeldAnswer();
    api.script(path, { status: 500, body: { error: { message: 'internal' } } }, hang, slow, { status: 500, body: {} });
    const jobId = await submit(world, ref, LIMITS, '0.025000');

    const delivery = signDelivery(webhook('response.completed', ref));
    const key = await expectAccepted(await deliver(server.url, world.provider, delivery));
    await waitUntil(async () => (await eventRows(jobId))[0]?.last_error?.includes('answered 500') === true);
    expect(await jobView(world, jobId)).toMatchObject({ state: 'usage_pending', settlements: [] });

    await hang.arrived;
    await hang.aborted; // the worker gave up after TALLY_USAGE_FETCH_TIMEOUT_MS
    await slow.arrived;
    // The worker is waiting for the provider right now.
    await expectNoTransactionOpen(jobId);
    expect(await jobView(world, jobId)).toMatchObject({ state: 'usage_pending', captured: '0.000000', settlements: [] });
    expect((await eventRows(jobId))[0]).toMatchObject({ state: 'processing', usage: null });
    expect(await walletOf(world)).toMatchObject({ reserved: '0.025000' });
    expect(await settlementCount(jobId)).toBe(0);
    slow.answer(200, responseObject(world, ref));

    const view = await settled(world, jobId, 'captured', 1);
    // 32 uncached × 1.00 + 0 cached + 18 × 2.00 per 1M = 0.000068
    expect(view).toMatchObject({ captured: '0.000068', released: '0.024932' });
    expect(view.settlements).toHaveLength(1);
    const [event] = await eventRows(jobId);
    expect(event).toMatchObject({ event_key: key, state: 'applied', usage: { input_tokens: 32, cached_input_tokens: 0, output_tokens: 18 }, fetch_attempts: 2, attempts: 1 });
    expect(api.requestsTo(path)).toHaveLength(3);
    expect(api.requestsTo(path).every((r) => r.authorization === `Bearer ${OPENAI_KEY}`)).toBe(true);

    // The same delivery again, then a re-emission: billed once, fetched no more.
    await expectAccepted(await deliver(server.url, world.provider, delivery), 'already_accepted');
    await expectAccepted(await send(world, webhook('response.completed', ref)));
    const again = await settled(world, jobId, 'captured', 2);
    expect(again.events[1]).toMatchObject({ state: 'no_effect', reason: 'job_already_captured' });
    expect(await settlementCount(jobId)).toBe(1);
    expect(api.requestsTo(path)).toHaveLength(3);
  });

  it('shows the tenant a stable error code for a failing usage fetch, and the detail (the provider URL) only to the admin', async () => {
    const ref = fresh('resp_');
    const path = `/v1/responses/${ref}`;
    const failure = { status: 500, body: { error: { message: 'internal' } } };
    api.script(path, failure, failure, { status: 200, body: responseObject(world, ref) });
    const jobId = await submit(world, ref, LIMITS, '0.025000');
    await expectAccepted(await send(world, webhook('response.completed', ref)));
    await waitUntil(async () => (await eventRows(jobId))[0]?.last_error?.includes('answered 500') === true);

    const tenantView = await world.tenant.get(`/v1/jobs/${jobId}`);
    const text = JSON.stringify(tenantView.body);
    expect(text).not.toContain(api.url);
    expect(text).not.toContain('answered 500');
    expect(tenantView.body.events[0]).not.toHaveProperty('last_error');
    expect(tenantView.body.events[0].error_code).toBe('usage_fetch_failed');
    const adminView = await admin.get(`/v1/jobs/${jobId}`);
    expect(adminView.status).toBe(200);
    expect(adminView.body.events[0].last_error).toContain('answered 500');

    const view = await settled(world, jobId, 'captured', 1);
    expect(view.events[0]).toMatchObject({ state: 'applied', error_code: null });
  });
  it('captures a completed batch from the batch object\'s usage', async () => {
    const ref = fresh('batch_');
    api.script(`/v1/batches/${ref}`, { status: 200, body: batchObject(world, ref) });
    const jobId = await submit(world, ref, LIMITS, '0.025000');
    await expectAccepted(await send(world, webhook('batch.completed', ref)));
    // 476 uncached × 1.00 + 1024 cached × 0.50 + 500 × 2.00 per 1M = 0.001988
    expect(await settled(world, jobId, 'captured', 1)).toMatchObject({ captured: '0.001988', released: '0.023012' });
  });

  it('applies the lifecycle per type: incomplete captures, failed and expired release, cancelled captures usage or releases', async () => {
    const cases: { type: string; object: (ref: string) => unknown; state: string; captured: string }[] = [
      { type: 'response.incomplete', object: (ref) => responseObject(world, ref, { status: 'incomplete' }), state: 'captured', captured: '0.000068' },
      { type: 'response.failed', object: (ref) => responseObject(world, ref, { status: 'failed' }), state: 'released', captured: '0.000000' },
      { type: 'batch.expired', object: (ref) => batchObject(world, ref, { status: 'expired' }), state: 'released', captured: '0.000000' },
      { type: 'response.cancelled', object: (ref) => responseObject(world, ref, { status: 'cancelled' }), state: 'captured', captured: '0.000068' },
      { type: 'batch.cancelled', object: (ref) => batchObject(world, ref, { status: 'cancelled', usage: null }), state: 'released', captured: '0.000000' },
      { type: 'batch.failed', object: (ref) => batchObject(world, ref, { status: 'failed', usage: null }), state: 'released', captured: '0.000000' },
    ];
    const jobs = [];
    for (const c of cases) {
      const ref = fresh(c.type.startsWith('batch.') ? 'batch_' : 'resp_');
      api.script(`/v1/${c.type.startsWith('batch.') ? 'batches' : 'responses'}/${ref}`, { status: 200, body: c.object(ref) });
      const jobId = await submit(world, ref, LIMITS, '0.025000');
      await expectAccepted(await send(world, webhook(c.type, ref)));
      jobs.push({ ...c, jobId });
    }
    for (const c of jobs) {
      expect(await settled(world, c.jobId, c.state, 1), c.type).toMatchObject({ captured: c.captured });
    }
  });

  it('under failed_with_usage=capture, captures a failed response\'s and an expired batch\'s fetched usage', async () => {
    const response = fresh('resp_');
    const batch = fresh('batch_');
    api.script(`/v1/responses/${response}`, { status: 200, body: responseObject(capturing, response, { status: 'failed' }) });
    api.script(`/v1/batches/${batch}`, { status: 200, body: batchObject(capturing, batch, { status: 'expired' }) });
    const responseJob = await submit(capturing, response, LIMITS, '0.025000');
    const batchJob = await submit(capturing, batch, LIMITS, '0.025000');
    await expectAccepted(await send(capturing, webhook('response.failed', response)));
    await expectAccepted(await send(capturing, webhook('batch.expired', batch)));
    expect(await settled(capturing, responseJob, 'captured', 1)).toMatchObject({ captured: '0.000068' });
    expect(await settled(capturing, batchJob, 'captured', 1)).toMatchObject({ captured: '0.001988' });
  });

  it('raises event_mismatch and bills nothing when the fetched object has another id or model', async () => {
    const cases = [
      { field: 'id', object: (ref: string) => responseObject(world, ref, { id: fresh('resp_') }) },
      { field: 'model', object: (ref: string) => responseObject(world, ref, { model: 'gpt-someone-else' }) },
    ];
    for (const c of cases) {
      const ref = fresh('resp_');
      api.script(`/v1/responses/${ref}`, { status: 200, body: c.object(ref) });
      const jobId = await submit(world, ref, LIMITS, '0.025000');
      const key = await expectAccepted(await send(world, webhook('response.completed', ref)));
      const view = await settled(world, jobId, 'reserved', 1);
      expect(view.events[0]).toMatchObject({ state: 'no_effect', reason: 'event_mismatch' });
      expect(view.settlements).toEqual([]);
      expect(await settlementCount(jobId)).toBe(0);
      const exceptions = await reconciliationExceptions();
      const mismatch = exceptions.find((e) => e.class === 'event_mismatch' && e.objects['event_key'] === key) as any;
      expect(mismatch, c.field).toBeDefined();
      expect(mismatch.detail.mismatch).toBe(c.field);
    }
  });

  it('never returns or logs the api_key', async () => {
    expect(JSON.stringify(world.providerAnswer.body)).not.toContain(OPENAI_KEY);
    expect(world.providerAnswer.body).toMatchObject({ kind: 'openai', has_api_key: true });
    const rotated = `sk-rotated-${randomUUID()}`;
    const patch = await admin.request('PATCH', `/v1/providers/${capturing.provider}`, { api_key: rotated });
    expect(patch.status).toBe(200);
    expect(JSON.stringify(patch.body)).not.toContain(rotated);
    const refused = await admin.post('/v1/providers', { name: `openai-nokey-${randomUUID().slice(0, 8)}`, kind: 'openai', secrets: [TEST_SECRET] });
    expect(refused.status).toBe(400);
    // The server has logged requests and fetch failures by now: none with the key.
    expect(server.output()).toContain('answered 500');
    expect(server.output()).not.toContain(OPENAI_KEY);
    const errors = await db.pool.query('select count(*)::int as n from webhook_events where last_error like $1', [`%${OPENAI_KEY}%`]);
    expect(errors.rows[0].n).toBe(0);
  });
});

describe('fal', () => {
  // inference_ms at 10.00 per 1,000,000 ms; 60 s of limits reserve 0.600000
  const LIMITS = { inference_ms: 60_000 };
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const stranger = generateKeyPairSync('ed25519').privateKey;
  const sample = fixtureText('fal-webhook-completed.json');
  const SAMPLE_ID = '123e4567-e89b-12d3-a456-426614174000';
  let world: NamedWorld;

  beforeAll(async () => {
    const model = `fal-ai/flux-${randomUUID().slice(0, 8)}/dev`;
    world = await namedWorld('fal', { jwks: { keys: [publicKey.export({ format: 'jwk' })] }, api_key: FAL_KEY, base_url: `${api.url}/` }, model, { inference_ms: '10.00' });
  });

  /** The published callback for this test's request, its raw bytes kept (the seed exceeds 2^53). */
  const callback = (requestId: string, status = 'OK') => sample.replaceAll(SAMPLE_ID, requestId).replace('"status": "OK"', `"status": "${status}"`);
  const statusPath = (requestId: string) => `/${world.model}/requests/${requestId}/status`;

  function falSend(raw: string, options: { key?: typeof privateKey; timestamp?: number } = {}) {
    const requestId = (JSON.parse(raw) as { request_id: string }).request_id;
    const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
    const digest = createHash('sha256').update(raw).digest('hex');
    const signature = sign(null, Buffer.from(`${requestId}\nuser_e2e\n${timestamp}\n${digest}`), options.key ?? privateKey).toString('hex');
    return deliver(server.url, world.provider, {
      body: raw,
      headers: {
        'content-type': 'application/json',
        'x-fal-webhook-request-id': requestId,
        'x-fal-webhook-user-id': 'user_e2e',
        'x-fal-webhook-timestamp': timestamp,
        'x-fal-webhook-signature': signature,
      },
    });
  }

  it('waits in usage_pending through a 500 and a slow answer, with no transaction open; captures inference_ms once', async () => {
    const ref = randomUUID();
    const slow = new HeldAnswer();
    api.script(statusPath(ref), { status: 503, body: {} }, slow, { status: 500, body: {} });
    const jobId = await submit(world, ref, LIMITS, '0.600000');

    const raw = callback(ref);
    const key = await expectAccepted(await falSend(raw, { timestamp: Math.floor(Date.now() / 1000) - 60 }));
    // fal redelivers the same callback with a new timestamp and signature: the same event.
    expect(await expectAccepted(await falSend(raw), 'already_accepted')).toBe(key);

    await slow.arrived;
    await expectNoTransactionOpen(jobId);
    expect(await jobView(world, jobId)).toMatchObject({ state: 'usage_pending', settlements: [] });
    expect(await settlementCount(jobId)).toBe(0);
    expect((await eventRows(jobId))[0]).toMatchObject({ usage: null, fetch_attempts: 1 });
    slow.answer(200, { status: 'COMPLETED', request_id: ref, metrics: { inference_time: 0.5005 }, logs: null });

    const view = await settled(world, jobId, 'captured', 1);
    // 0.5005 s = 501 ms (exact; 0.5005 × 1000 in floating point rounds to 500) × 10.00 / 1,000,000
    expect(view).toMatchObject({ captured: '0.005010', released: '0.594990' });
    expect(api.requestsTo(statusPath(ref)).map((r) => r.authorization)).toEqual([`Key ${FAL_KEY}`, `Key ${FAL_KEY}`]);

    // Another callback for the same request (other bytes → another derived key): no second charge.
    await expectAccepted(await falSend(raw.replace('image.png', 'image-2.png')));
    const again = await settled(world, jobId, 'captured', 2);
    expect(again.events[1]).toMatchObject({ state: 'no_effect', reason: 'job_already_captured' });
    expect(await settlementCount(jobId)).toBe(1);
    expect(server.output()).not.toContain(FAL_KEY);
  });

  it('releases an ERROR callback whose status reports no inference time', async () => {
    const ref = randomUUID();
    api.script(statusPath(ref), { status: 200, body: { status: 'COMPLETED', request_id: ref, metrics: {} } });
    const jobId = await submit(world, ref, LIMITS, '0.600000');
    await expectAccepted(await falSend(callback(ref, 'ERROR')));
    expect(await settled(world, jobId, 'released', 1)).toMatchObject({ captured: '0.000000', released: '0.600000' });
  });

  it('raises event_mismatch and bills nothing when the status belongs to another request', async () => {
    const ref = randomUUID();
    api.script(statusPath(ref), { status: 200, body: { status: 'COMPLETED', request_id: randomUUID(), metrics: { inference_time: 3 } } });
    const jobId = await submit(world, ref, LIMITS, '0.600000');
    const key = await expectAccepted(await falSend(callback(ref)));
    const view = await settled(world, jobId, 'reserved', 1);
    expect(view.events[0]).toMatchObject({ state: 'no_effect', reason: 'event_mismatch' });
    expect(await settlementCount(jobId)).toBe(0);
    const exceptions = await reconciliationExceptions();
    expect(exceptions.some((e) => e.class === 'event_mismatch' && e.objects['event_key'] === key)).toBe(true);
  });

  it('refuses a forged signature and a key not in the JWKS as invalid_signature, storing nothing', async () => {
    const ref = randomUUID();
    const jobId = await submit(world, ref, LIMITS, '0.600000');
    const byStranger = await falSend(callback(ref), { key: stranger });
    expect(byStranger.status).toBe(401);
    expect(byStranger.body.error.code).toBe('invalid_signature');
    const raw = callback(ref);
    const digest = createHash('sha256').update(raw).digest('hex');
    const timestamp = String(Math.floor(Date.now() / 1000));
    const forged = await deliver(server.url, world.provider, {
      body: raw,
      headers: {
        'content-type': 'application/json',
        'x-fal-webhook-request-id': ref,
        'x-fal-webhook-user-id': 'user_e2e',
        'x-fal-webhook-timestamp': timestamp,
        // signed over other bytes than these
        'x-fal-webhook-signature': sign(null, Buffer.from(`${ref}\nuser_e2e\n${timestamp}\n${digest.replace(/^./, (c) => (c === '0' ? '1' : '0'))}`), privateKey).toString('hex'),
      },
    });
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe('invalid_signature');
    expect(await eventRows(jobId)).toEqual([]);
  });
});
