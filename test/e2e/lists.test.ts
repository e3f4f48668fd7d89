import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { refuseCapturesOnDemand } from '../support/refused-captures.js';
import { startServer } from '../support/server.js';
import { Client, TEST_SECRET, type Answer } from '../support/client.js';
import { createWorld, submitJob, type World } from '../support/world.js';
import { jobView, providerEvent, send, settledJob } from '../support/jobs.js';

/**
 * Issue 13.1, the list APIs: tenants, jobs, settlements, events, alerts, reconciliation
 * exceptions, prices and providers, each `{data, has_more}` newest first with
 * limit / starting_after / ending_before, and every filter honoured or refused (400).
 * Against a real `tally serve` with its worker; every answer is checked against the
 * route's response schema (TALLY_CHECK_RESPONSES=1). Exact ids throughout: the database
 * is this file's own, so every list holds exactly what the setup below made.
 */
const db = await freshDatabase();
// One attempt before the dead letter, and no scheduled reconciliation: the exceptions
// are the ones the last test's runs find.
const server = await startServer(db.url, { workers: 1, env: { TALLY_MAX_ATTEMPTS: '1', TALLY_RECONCILE_INTERVAL_SECONDS: '0' } });
const admin = new Client(server.url);

// A permanent settle error, as a real PostgreSQL failure: the capture of a listed job is refused.
const refusals = await refuseCapturesOnDemand(db.pool);

const USAGE = { input_tokens: 1200, output_tokens: 340 };
const OVER_USAGE = { input_tokens: 20_000, output_tokens: 10_000 }; // beyond the 10,000 / 5,000 limits

interface SentEvent {
  id: string;
  key: string;
  jobId: string;
}

async function event(world: World, jobId: string, type: string, data: Record<string, unknown> = {}): Promise<SentEvent> {
  const key = `msg_${randomUUID()}`;
  await send(server.url, world, providerEvent(world, jobId, type, data), key);
  return { id: `${world.provider}/${key}`, key, jobId };
}

function ids(answer: Answer): string[] {
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.data.map((item: { id: string }) => item.id);
}

/** A page as [ids, has_more]. */
async function page(client: Client, path: string): Promise<[string[], boolean]> {
  const answer = await client.get(path);
  return [ids(answer), answer.body.has_more];
}

async function refused(client: Client, path: string, param: string, code = 'invalid_request'): Promise<string> {
  const answer = await client.get(path);
  expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(code === 'forbidden' ? 403 : 400);
  expect(answer.body.error).toMatchObject({ code, param });
  return answer.body.error.message;
}

// --- The world: two tenants, A with nine jobs in every state, B with two. -------------

const A = await createWorld(admin);
const B = await createWorld(admin);
const secondProvider = `gen2-${randomUUID().slice(0, 8)}`;
expect((await admin.post('/v1/providers', { name: secondProvider, kind: 'generic', secrets: [TEST_SECRET] })).status).toBe(201);
const secondModel = `model2-${randomUUID().slice(0, 8)}`;
const put = (model: string, currency: string, unitPrices: Record<string, string>) =>
  admin.request('PUT', `/v1/prices/${encodeURIComponent(model)}`, { currency, unit_prices: unitPrices });
const priceIds: string[] = [];
for (const [model, currency] of [
  [A.model, 'EUR'],
  [secondModel, 'USD'],
] as const) {
  const answer = await put(model, currency, { input_tokens: '1.00', output_tokens: '2.00' });
  expect(answer.status).toBe(201);
  priceIds.push(answer.body.id);
}
const eurWallet = (await A.tenant.post('/v1/wallets', { currency: 'EUR' })).body.id as string;
expect((await admin.post(`/v1/wallets/${eurWallet}/credits`, { amount: '100.00' }, { 'idempotency-key': randomUUID() })).status).toBe(201);

const a: string[] = [];
for (let i = 0; i < 6; i++) a.push((await submitJob(A)).id);
a.push((await submitJob(A, undefined, { provider: secondProvider })).id);
a.push((await submitJob(A, undefined, { model: secondModel })).id);
a.push((await submitJob(A, undefined, { wallet_id: eurWallet })).id);
const [a1, a2, a3, a4, a5, a6, a7, a8, a9] = a as [string, string, string, string, string, string, string, string, string];

// A's events, in the order received: e1..e7.
const e: SentEvent[] = [];
e.push(await event(A, a1, 'job.started'));
e.push(await event(A, a1, 'job.completed', { usage: USAGE }));
await settledJob(A, a1, 'captured', { events: 2 });
e.push(await event(A, a2, 'job.failed'));
await settledJob(A, a2, 'released', { events: 1 });
e.push(await event(A, a3, 'job.started'));
await settledJob(A, a3, 'running', { events: 1 });
e.push(await event(A, a4, 'job.completed', { usage: OVER_USAGE }));
await settledJob(A, a4, 'captured', { events: 1 });
await refusals.refuse(a5, a6);
e.push(await event(A, a5, 'job.completed', { usage: USAGE }));
await settledJob(A, a5, 'reserved', { events: 1 });
e.push(await event(A, a6, 'job.completed', { usage: USAGE }));
await settledJob(A, a6, 'reserved', { events: 1 });
const discard = await admin.post(`/v1/events/${A.provider}/${e[6]!.key}/discard`, { note: 'refused for good' });
expect(discard.status, JSON.stringify(discard.body)).toBe(200);
const [e1, e2, e3, e4, e5, e6, e7] = e as [SentEvent, SentEvent, SentEvent, SentEvent, SentEvent, SentEvent, SentEvent];

const b1 = (await submitJob(B)).id;
const b2 = (await submitJob(B)).id;
const eb1 = await event(B, b1, 'job.completed', { usage: OVER_USAGE });
await settledJob(B, b1, 'captured', { events: 1 });

const q = (path: string, params: Record<string, string>) => `${path}?${new URLSearchParams(params)}`;

describe('GET /v1/jobs', () => {
  it('pages newest first, forwards and backwards, with has_more in the direction asked', async () => {
    expect(await page(A.tenant, '/v1/jobs')).toEqual([[a9, a8, a7, a6, a5, a4, a3, a2, a1], false]);
    expect(await page(A.tenant, '/v1/jobs?limit=4')).toEqual([[a9, a8, a7, a6], true]);
    expect(await page(A.tenant, `/v1/jobs?limit=4&starting_after=${a6}`)).toEqual([[a5, a4, a3, a2], true]);
    expect(await page(A.tenant, `/v1/jobs?limit=4&starting_after=${a2}`)).toEqual([[a1], false]);
    expect(await page(A.tenant, `/v1/jobs?limit=4&ending_before=${a1}`)).toEqual([[a5, a4, a3, a2], true]);
    expect(await page(A.tenant, `/v1/jobs?limit=4&ending_before=${a5}`)).toEqual([[a9, a8, a7, a6], false]);
    expect(await page(A.tenant, `/v1/jobs?limit=4&ending_before=${a9}`)).toEqual([[], false]);

    const first = (await A.tenant.get('/v1/jobs?limit=1')).body.data[0];
    expect(first).toMatchObject({ id: a9, tenant_id: A.tenantId, wallet_id: eurWallet, state: 'reserved', currency: 'EUR', price_version: 1 });
  });

  it('honours state, model, provider, wallet_id and created_gte / created_lt', async () => {
    const jobs = (params: Record<string, string>) => page(A.tenant, q('/v1/jobs', params)).then(([list]) => list);
    expect(await jobs({ state: 'captured' })).toEqual([a4, a1]);
    expect(await jobs({ state: 'released' })).toEqual([a2]);
    expect(await jobs({ state: 'running' })).toEqual([a3]);
    expect(await jobs({ state: 'reserved' })).toEqual([a9, a8, a7, a6, a5]);
    expect(await jobs({ state: 'usage_pending' })).toEqual([]);
    expect(await jobs({ model: secondModel })).toEqual([a8]);
    expect(await jobs({ provider: secondProvider })).toEqual([a7]);
    expect(await jobs({ provider: A.provider, state: 'reserved' })).toEqual([a9, a8, a6, a5]);
    expect(await jobs({ wallet_id: eurWallet })).toEqual([a9]);
    expect(await jobs({ wallet_id: A.walletId.toUpperCase() })).toEqual([a8, a7, a6, a5, a4, a3, a2, a1]);

    const createdAt = async (id: string) => (await A.tenant.get(`/v1/jobs/${id}`)).body.created_at as string;
    const [at3, at5] = [await createdAt(a3), await createdAt(a5)];
    expect(await jobs({ created_gte: at5 })).toEqual([a9, a8, a7, a6, a5]);
    expect(await jobs({ created_lt: at5 })).toEqual([a4, a3, a2, a1]);
    expect(await jobs({ created_gte: at3, created_lt: at5, limit: '1' })).toEqual([a4]);
    expect(await page(A.tenant, q('/v1/jobs', { created_gte: at3, created_lt: at5, limit: '1', starting_after: a4 }))).toEqual([[a3], false]);
    // RFC 3339 with an offset is the same instant.
    const offset = new Date(new Date(at5).getTime()).toISOString().replace('Z', '+00:00');
    expect(await jobs({ created_gte: offset })).toEqual([a9, a8, a7, a6, a5]);
    // Microseconds count: one microsecond after a5's instant, a5 is before it, not at or after.
    // (The view shows milliseconds; the row is stamped to the microsecond, read here exactly.)
    const exact5 = await exactCreatedAt('jobs', a5);
    expect(await jobs({ created_lt: plusMicrosecond(exact5) })).toEqual([a5, a4, a3, a2, a1]);
    expect(await jobs({ created_gte: plusMicrosecond(exact5) })).toEqual([a9, a8, a7, a6]);
    expect(await jobs({ created_gte: exact5, created_lt: plusMicrosecond(exact5) })).toEqual([a5]);
  });

  it('a tenant sees only its own; the admin sees all, filters by tenant_id, and reads any tenant\'s job', async () => {
    expect((await page(B.tenant, '/v1/jobs'))[0]).toEqual([b2, b1]);
    // Another tenant's wallet as a filter finds nothing of it.
    expect((await page(B.tenant, `/v1/jobs?wallet_id=${A.walletId}`))[0]).toEqual([]);
    expect((await page(admin, '/v1/jobs'))[0]).toEqual([b2, b1, a9, a8, a7, a6, a5, a4, a3, a2, a1]);
    expect((await page(admin, `/v1/jobs?tenant_id=${B.tenantId}`))[0]).toEqual([b2, b1]);
    expect((await page(admin, `/v1/jobs?tenant_id=${A.tenantId}&state=captured`))[0]).toEqual([a4, a1]);
    expect((await page(admin, '/v1/jobs?state=captured'))[0]).toEqual([b1, a4, a1]);
    expect((await page(admin, `/v1/jobs?tenant_id=${randomUUID()}`))[0]).toEqual([]);
    // A tenant naming itself is allowed; naming any other tenant (or none that exists) is 403.
    expect((await page(A.tenant, `/v1/jobs?tenant_id=${A.tenantId}&limit=2`))[0]).toEqual([a9, a8]);
    await refused(A.tenant, `/v1/jobs?tenant_id=${B.tenantId}`, 'tenant_id', 'forbidden');
    await refused(A.tenant, `/v1/jobs?tenant_id=${randomUUID()}`, 'tenant_id', 'forbidden');

    const read = await admin.get(`/v1/jobs/${b1}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: b1, state: 'captured' });
    expect((await A.tenant.get(`/v1/jobs/${b1}`)).status).toBe(404);
    expect((await new Client(server.url, null).get('/v1/jobs')).status).toBe(401);
  });

  it('refuses bad values with 400 and the param at fault, never ignores them', async () => {
    const states = await refused(A.tenant, '/v1/jobs?state=done', 'state');
    expect(states).toContain('"reserved"');
    expect(states).toContain('"captured"');
    expect(states).toContain('(got "done")');
    await refused(A.tenant, '/v1/jobs?wallet_id=wallet-1', 'wallet_id');
    await refused(A.tenant, '/v1/jobs?tenant_id=42', 'tenant_id');
    await refused(A.tenant, '/v1/jobs?created_gte=yesterday', 'created_gte');
    await refused(A.tenant, '/v1/jobs?created_lt=2026-13-01T00:00:00Z', 'created_lt');
    await refused(A.tenant, '/v1/jobs?created_lt=2026-01-01', 'created_lt');
    await refused(A.tenant, '/v1/jobs?model=', 'model');
    await refused(A.tenant, '/v1/jobs?wallet=x', 'wallet');
    await refused(A.tenant, '/v1/jobs?starting_after=job_1', 'starting_after', 'invalid_cursor');
    await refused(A.tenant, `/v1/jobs?starting_after=${a1}&ending_before=${a2}`, 'ending_before');
    for (const limit of ['0', '101', '1000', '-1', 'ten', '']) await refused(A.tenant, `/v1/jobs?limit=${limit}`, 'limit');
    expect((await page(A.tenant, '/v1/jobs?limit=1'))[0]).toEqual([a9]);
    expect((await page(A.tenant, '/v1/jobs?limit=100'))[0]).toHaveLength(9);
  });
});

describe('GET /v1/settlements', () => {
  it('pages newest first and honours charge_type, job_id, the created range and the tenant', async () => {
    const key = (world: World, job: string, type: string) => `${world.tenantId}:${job}:${type}:1`;
    const all = (await A.tenant.get('/v1/settlements')).body;
    expect(all.has_more).toBe(false);
    expect(all.data.map((s: { key: string }) => s.key)).toEqual([key(A, a4, 'capture'), key(A, a2, 'release'), key(A, a1, 'capture')]);
    const [s4, s2, s1] = all.data as { id: string; created_at: string }[];
    expect(all.data[2]).toMatchObject({ tenant_id: A.tenantId, job_id: a1, charge_type: 'capture', amount: '0.001880', event_id: e2.id, status: 'posted' });
    expect(all.data[2].pricing).toMatchObject({ usage: USAGE, priceVersion: 1 });
    expect(all.data[1]).toMatchObject({ charge_type: 'release', event_id: e3.id });

    const list = (params: Record<string, string>) => page(A.tenant, q('/v1/settlements', params));
    expect(await list({ limit: '2' })).toEqual([[s4!.id, s2!.id], true]);
    expect(await list({ limit: '2', starting_after: s2!.id })).toEqual([[s1!.id], false]);
    expect(await list({ limit: '2', ending_before: s1!.id })).toEqual([[s4!.id, s2!.id], false]);
    expect(await list({ limit: '1', ending_before: s1!.id })).toEqual([[s2!.id], true]);
    expect((await list({ charge_type: 'release' }))[0]).toEqual([s2!.id]);
    expect((await list({ charge_type: 'adjustment' }))[0]).toEqual([]);
    expect((await list({ job_id: a1 }))[0]).toEqual([s1!.id]);
    expect((await list({ created_gte: s2!.created_at }))[0]).toEqual([s4!.id, s2!.id]);
    expect((await list({ created_lt: s2!.created_at }))[0]).toEqual([s1!.id]);
    const exact2 = await exactCreatedAt('settlements', s2!.id);
    expect((await list({ created_lt: plusMicrosecond(exact2) }))[0]).toEqual([s2!.id, s1!.id]);
    expect((await list({ created_gte: plusMicrosecond(exact2) }))[0]).toEqual([s4!.id]);

    const sb = ids(await B.tenant.get('/v1/settlements'));
    expect(sb).toHaveLength(1);
    expect(ids(await admin.get('/v1/settlements'))).toEqual([...sb, s4!.id, s2!.id, s1!.id]);
    expect(ids(await admin.get(`/v1/settlements?tenant_id=${B.tenantId}`))).toEqual(sb);
    expect(ids(await admin.get(`/v1/settlements?job_id=${b1}`))).toEqual(sb);
    expect(ids(await A.tenant.get(`/v1/settlements?job_id=${b1}`))).toEqual([]);
    await refused(A.tenant, `/v1/settlements?tenant_id=${B.tenantId}`, 'tenant_id', 'forbidden');
    expect(await refused(A.tenant, '/v1/settlements?charge_type=refund', 'charge_type')).toContain('"adjustment"');
    await refused(A.tenant, '/v1/settlements?job_id=nope', 'job_id');
    await refused(A.tenant, '/v1/settlements?created_gte=1700000000', 'created_gte');
    await refused(A.tenant, '/v1/settlements?state=posted', 'state');
  });
});

describe('GET /v1/events', () => {
  it('pages newest received first over a two-part cursor (provider/event_key), both ways', async () => {
    const list = (client: Client, params: Record<string, string>) => page(client, q('/v1/events', params));
    expect(await list(A.tenant, {})).toEqual([[e7, e6, e5, e4, e3, e2, e1].map((x) => x.id), false]);
    expect(await list(A.tenant, { limit: '3' })).toEqual([[e7.id, e6.id, e5.id], true]);
    expect(await list(A.tenant, { limit: '3', starting_after: e5.id })).toEqual([[e4.id, e3.id, e2.id], true]);
    expect(await list(A.tenant, { limit: '3', starting_after: e2.id })).toEqual([[e1.id], false]);
    expect(await list(A.tenant, { limit: '3', ending_before: e1.id })).toEqual([[e4.id, e3.id, e2.id], true]);
    expect(await list(A.tenant, { limit: '3', ending_before: e4.id })).toEqual([[e7.id, e6.id, e5.id], false]);
    // The cursor must name an event the caller may see.
    await refused(A.tenant, q('/v1/events', { starting_after: `${A.provider}/msg_unknown` }), 'starting_after', 'invalid_cursor');
    await refused(A.tenant, q('/v1/events', { ending_before: eb1.id }), 'ending_before', 'invalid_cursor');
    await refused(A.tenant, q('/v1/events', { starting_after: e1.key }), 'starting_after', 'invalid_cursor');
  });

  it('honours state (dead and discarded included), provider, job_id and the tenant; the raw error is the admin\'s', async () => {
    const list = async (client: Client, params: Record<string, string>) => (await page(client, q('/v1/events', params)))[0];
    // What each event became, from the job views, newest first.
    const stateOf = new Map<string, string>();
    for (const job of [a1, a2, a3, a4, a5, a6]) for (const ev of (await jobView(A, job)).events) stateOf.set(`${A.provider}/${ev.event_key}`, ev.state);
    const newestFirst = [e7, e6, e5, e4, e3, e2, e1].map((x) => x.id);
    expect(stateOf.get(e6.id)).toBe('dead');
    expect(stateOf.get(e7.id)).toBe('discarded');
    for (const state of ['pending', 'processing', 'applied', 'no_effect', 'stale', 'dead', 'discarded']) {
      expect(await list(A.tenant, { state }), state).toEqual(newestFirst.filter((id) => stateOf.get(id) === state));
    }
    expect(await list(A.tenant, { state: 'applied' })).toContain(e2.id);
    expect(await list(A.tenant, { job_id: a1 })).toEqual([e2.id, e1.id]);
    expect(await list(A.tenant, { provider: A.provider, limit: '2' })).toEqual([e7.id, e6.id]);
    expect(await list(A.tenant, { provider: B.provider })).toEqual([]);
    expect(await list(admin, { provider: B.provider })).toEqual([eb1.id]);
    expect(await list(admin, {})).toEqual([eb1.id, ...newestFirst]);
    expect(await list(admin, { tenant_id: B.tenantId })).toEqual([eb1.id]);
    expect(await list(admin, { state: 'dead' })).toEqual([e6.id]);
    expect(await list(B.tenant, {})).toEqual([eb1.id]);
    await refused(A.tenant, q('/v1/events', { tenant_id: B.tenantId }), 'tenant_id', 'forbidden');

    const tenantDead = (await A.tenant.get('/v1/events?state=dead')).body.data[0];
    expect(tenantDead).toMatchObject({ id: e6.id, provider: A.provider, event_key: e6.key, job_id: a5, tenant_id: A.tenantId, type: 'job.completed', error_code: 'settlement_failed', attempts: 1 });
    expect(tenantDead.dead_lettered_at).not.toBeNull();
    expect(tenantDead).not.toHaveProperty('last_error');
    const adminDead = (await admin.get('/v1/events?state=dead')).body.data[0];
    expect(adminDead.last_error).toContain('refused for good by the test');
    const adminDiscarded = (await admin.get('/v1/events?state=discarded')).body.data[0];
    expect(adminDiscarded).toMatchObject({ id: e7.id, discarded_by: 'admin', discard_note: 'refused for good' });
    const applied = (await A.tenant.get(q('/v1/events', { job_id: a1, limit: '1' }))).body.data[0];
    expect(applied).toMatchObject({ id: e2.id, state: 'applied', settlement_key: `${A.tenantId}:${a1}:capture:1`, error_code: null });

    expect(await refused(A.tenant, '/v1/events?state=failed', 'state')).toContain('"discarded"');
    await refused(A.tenant, '/v1/events?job_id=123', 'job_id');
    await refused(A.tenant, '/v1/events?type=job.completed', 'type');
  });
});

describe('GET /v1/alerts', () => {
  it('pages newest first; class, job_id and tenant honoured', async () => {
    const [alertsA] = await page(A.tenant, '/v1/alerts');
    expect(alertsA).toHaveLength(1);
    const alertA = (await A.tenant.get('/v1/alerts')).body.data[0];
    expect(alertA).toMatchObject({ tenant_id: A.tenantId, job_id: a4, class: 'usage_exceeds_reservation' });
    const [alertsB] = await page(B.tenant, '/v1/alerts');
    expect(alertsB).toHaveLength(1);
    expect(await page(admin, '/v1/alerts')).toEqual([[...alertsB, ...alertsA], false]);
    expect(await page(admin, '/v1/alerts?limit=1')).toEqual([alertsB, true]);
    expect(await page(admin, `/v1/alerts?limit=1&starting_after=${alertsB[0]}`)).toEqual([alertsA, false]);
    expect(await page(admin, `/v1/alerts?limit=1&ending_before=${alertsA[0]}`)).toEqual([alertsB, false]);
    expect((await page(admin, `/v1/alerts?tenant_id=${A.tenantId}`))[0]).toEqual(alertsA);
    expect((await page(admin, `/v1/alerts?job_id=${b1}`))[0]).toEqual(alertsB);
    expect((await page(admin, '/v1/alerts?class=usage_exceeds_reservation'))[0]).toEqual([...alertsB, ...alertsA]);
    expect((await page(admin, '/v1/alerts?class=wallet_overdrawn'))[0]).toEqual([]);
    expect((await page(A.tenant, `/v1/alerts?job_id=${b1}`))[0]).toEqual([]);
    expect(await refused(A.tenant, '/v1/alerts?class=overdrawn', 'class')).toContain('"wallet_overdrawn"');
    await refused(A.tenant, `/v1/alerts?tenant_id=${B.tenantId}`, 'tenant_id', 'forbidden');
  });
});

describe('GET /v1/prices and /v1/providers', () => {
  it('prices: one object per version, newest first, marked current; model, currency and current honoured', async () => {
    const v2 = await put(A.model, 'USD', { input_tokens: '1.50', output_tokens: '2.00' });
    expect(v2.status).toBe(201);
    expect(v2.body.version).toBe(2);
    const all = (await A.tenant.get('/v1/prices?limit=100')).body.data as { id: string; model: string; currency: string; version: number; current: boolean }[];
    expect(all.map((p) => [p.model, p.currency, p.version, p.current])).toEqual([
      [A.model, 'USD', 2, true],
      [secondModel, 'USD', 1, true],
      [A.model, 'EUR', 1, true],
      [B.model, 'USD', 1, true],
      [A.model, 'USD', 1, false],
    ]);
    expect(all[0]!.id).toBe(v2.body.id);
    expect(all.slice(1, 3).map((p) => p.id)).toEqual([...priceIds].reverse());
    const allIds = all.map((p) => p.id);
    expect(await page(admin, '/v1/prices?limit=2')).toEqual([allIds.slice(0, 2), true]);
    expect(await page(admin, `/v1/prices?limit=2&starting_after=${allIds[1]}`)).toEqual([allIds.slice(2, 4), true]);
    expect(await page(admin, `/v1/prices?limit=2&starting_after=${allIds[3]}`)).toEqual([allIds.slice(4), false]);
    expect(await page(admin, `/v1/prices?limit=3&ending_before=${allIds[4]}`)).toEqual([allIds.slice(1, 4), true]);

    const prices = async (params: Record<string, string>) => (await page(A.tenant, q('/v1/prices', params)))[0];
    expect(await prices({ model: A.model })).toEqual([allIds[0], allIds[2], allIds[4]]);
    expect(await prices({ model: A.model, currency: 'USD' })).toEqual([allIds[0], allIds[4]]);
    expect(await prices({ currency: 'EUR' })).toEqual([allIds[2]]);
    expect(await prices({ current: 'false' })).toEqual([allIds[4]]);
    expect(await prices({ current: 'true', model: A.model })).toEqual([allIds[0], allIds[2]]);
    expect(await prices({ model: 'no-such-model' })).toEqual([]);
    await refused(A.tenant, '/v1/prices?currency=usd', 'currency');
    await refused(A.tenant, '/v1/prices?current=yes', 'current');
    await refused(A.tenant, `/v1/prices?tenant_id=${A.tenantId}`, 'tenant_id');
  });

  it('providers: the admin\'s, newest registered first, secrets never shown; the cursor is a name', async () => {
    const all = (await admin.get('/v1/providers')).body;
    expect(all.data.map((p: { name: string }) => p.name)).toEqual([secondProvider, B.provider, A.provider]);
    expect(all.data[0]).toEqual({
      name: secondProvider,
      kind: 'generic',
      webhook_path: `/v1/webhooks/${secondProvider}`,
      policies: expect.any(Object),
      secrets_count: 1,
      has_api_key: false,
      base_url: null,
      user_id: null,
    });
    expect(JSON.stringify(all)).not.toContain(TEST_SECRET);
    const names = async (path: string) => {
      const answer = await admin.get(path);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return [answer.body.data.map((p: { name: string }) => p.name), answer.body.has_more];
    };
    expect(await names('/v1/providers?limit=2')).toEqual([[secondProvider, B.provider], true]);
    expect(await names(`/v1/providers?limit=2&starting_after=${B.provider}`)).toEqual([[A.provider], false]);
    expect(await names(`/v1/providers?limit=1&ending_before=${A.provider}`)).toEqual([[B.provider], true]);
    expect(await names(`/v1/providers?limit=2&ending_before=${B.provider}`)).toEqual([[secondProvider], false]);
    await refused(admin, '/v1/providers?starting_after=no-such-provider', 'starting_after', 'invalid_cursor');
    await refused(admin, '/v1/providers?starting_after=Not%20A%20Name', 'starting_after', 'invalid_cursor');
    await refused(admin, '/v1/providers?kind=generic', 'kind');
    expect((await A.tenant.get('/v1/providers')).status).toBe(403);
  });
});

describe('GET /v1/tenants', () => {
  it('the admin pages tenants newest first (20 by default), reads one; a tenant key is 403', async () => {
    expect(await page(admin, '/v1/tenants')).toEqual([[B.tenantId, A.tenantId], false]);
    expect(await page(admin, '/v1/tenants?limit=1')).toEqual([[B.tenantId], true]);
    expect(await page(admin, `/v1/tenants?starting_after=${B.tenantId}`)).toEqual([[A.tenantId], false]);
    expect(await page(admin, `/v1/tenants?ending_before=${A.tenantId}`)).toEqual([[B.tenantId], false]);
    const one = await admin.get(`/v1/tenants/${A.tenantId}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ id: A.tenantId, name: expect.stringMatching(/^tenant-/), metadata: {}, created_at: expect.any(String) });
    expect((await admin.get(`/v1/tenants/${randomUUID()}`)).status).toBe(404);
    expect((await admin.get('/v1/tenants/not-an-id')).status).toBe(404);
    expect((await A.tenant.get('/v1/tenants')).status).toBe(403);
    expect((await A.tenant.get(`/v1/tenants/${A.tenantId}`)).status).toBe(403);
    await refused(admin, '/v1/tenants?name=x', 'name');

    const more: string[] = [];
    for (let i = 0; i < 21; i++) more.push((await admin.post('/v1/tenants', { name: `extra-${i}` })).body.id);
    const newestFirst = [...more.reverse(), B.tenantId, A.tenantId];
    expect(await page(admin, '/v1/tenants')).toEqual([newestFirst.slice(0, 20), true]);
    expect(await page(admin, `/v1/tenants?starting_after=${newestFirst[19]}`)).toEqual([newestFirst.slice(20), false]);
    expect(await page(admin, '/v1/tenants?limit=100')).toEqual([newestFirst, false]);
  });
});

describe('GET /v1/reconciliation/exceptions', () => {
  it('pages exceptions newest first; class, status (open, resolved, cleared) and tenant_id honoured', async () => {
    const run = await admin.post('/v1/reconciliation/runs', {});
    expect(run.status, JSON.stringify(run.body)).toBe(201);
    const found = run.body.exceptions as { id: string; class: string; objects: Record<string, string> }[];
    expect(found.map((x) => x.class).sort()).toEqual(['event_dead', 'usage_exceeds_reservation', 'usage_exceeds_reservation']);
    const dead = found.find((x) => x.class === 'event_dead')!;
    const overA = found.find((x) => x.class === 'usage_exceeds_reservation' && x.objects.job_id === a4)!;
    const overB = found.find((x) => x.class === 'usage_exceeds_reservation' && x.objects.job_id === b1)!;
    const newestFirst = found.map((x) => x.id).sort().reverse();

    const list = (params: Record<string, string>) => page(admin, q('/v1/reconciliation/exceptions', params));
    expect(await list({})).toEqual([newestFirst, false]);
    expect(await list({ limit: '2' })).toEqual([newestFirst.slice(0, 2), true]);
    expect(await list({ limit: '2', starting_after: newestFirst[1]! })).toEqual([newestFirst.slice(2), false]);
    expect(await list({ limit: '1', ending_before: newestFirst[2]! })).toEqual([newestFirst.slice(1, 2), true]);
    expect((await list({ class: 'event_dead' }))[0]).toEqual([dead.id]);
    expect((await list({ tenant_id: A.tenantId }))[0]).toEqual(newestFirst.filter((id) => id !== overB.id));
    expect((await list({ tenant_id: B.tenantId }))[0]).toEqual([overB.id]);
    expect((await list({ status: 'open' }))[0]).toEqual(newestFirst);
    const item = (await admin.get(q('/v1/reconciliation/exceptions', { class: 'event_dead' }))).body.data[0];
    expect(item).toMatchObject({ id: dead.id, status: 'open', resolved: false, tenant_id: A.tenantId, cleared_at: null, objects: { job_id: a5 } });

    expect((await admin.post(`/v1/reconciliation/exceptions/${overB.id}/resolve`, { note: 'B was told' })).status).toBe(200);
    // The dead event set aside: the next run no longer finds it, and its exception clears.
    expect((await admin.post(`/v1/events/${A.provider}/${e6.key}/discard`, { note: 'not coming back' })).status).toBe(200);
    expect((await admin.post('/v1/reconciliation/runs', {})).status).toBe(201);
    expect((await list({ status: 'open' }))[0]).toEqual([overA.id]);
    expect((await list({ status: 'resolved' }))[0]).toEqual([overB.id]);
    expect((await list({ status: 'cleared' }))[0]).toEqual([dead.id]);
    expect((await list({ status: 'open', tenant_id: B.tenantId }))[0]).toEqual([]);
    const resolved = (await admin.get(q('/v1/reconciliation/exceptions', { status: 'resolved' }))).body.data[0];
    expect(resolved).toMatchObject({ status: 'resolved', resolved: true, resolution_note: 'B was told', tenant_id: B.tenantId });

    expect(await refused(admin, '/v1/reconciliation/exceptions?status=closed', 'status')).toContain('"resolved"');
    expect(await refused(admin, '/v1/reconciliation/exceptions?class=drift', 'class')).toContain('"projection_drift"');
    await refused(admin, '/v1/reconciliation/exceptions?tenant_id=x', 'tenant_id');
    expect((await A.tenant.get('/v1/reconciliation/exceptions')).status).toBe(403);
  });
});

describe('the OpenAPI document', () => {
  it('describes every list with its filters and its {data, has_more} answer', async () => {
    const doc = (await admin.get('/openapi.json')).body;
    const lists: Record<string, string[]> = {
      '/v1/tenants': [],
      '/v1/jobs': ['state', 'model', 'provider', 'wallet_id', 'created_gte', 'created_lt', 'tenant_id'],
      '/v1/settlements': ['charge_type', 'job_id', 'created_gte', 'created_lt', 'tenant_id'],
      '/v1/events': ['state', 'provider', 'job_id', 'tenant_id'],
      '/v1/alerts': ['class', 'job_id', 'tenant_id'],
      '/v1/reconciliation/exceptions': ['class', 'status', 'tenant_id'],
      '/v1/prices': ['model', 'currency', 'current'],
      '/v1/providers': [],
    };
    for (const [path, filters] of Object.entries(lists)) {
      const get = doc.paths[path]?.get;
      expect(get, path).toBeDefined();
      const params = get.parameters.map((p: { name: string }) => p.name);
      expect(params, path).toEqual(expect.arrayContaining(['limit', 'starting_after', 'ending_before', ...filters]));
      const schema = get.responses['200'].content['application/json'].schema;
      expect(Object.keys(schema.properties), path).toEqual(['data', 'has_more']);
      expect(schema.properties.data.items.properties, path).toBeDefined();
    }
    const state = doc.paths['/v1/events'].get.parameters.find((p: { name: string }) => p.name === 'state');
    expect(JSON.stringify(state.schema)).toContain('discarded');
    expect(doc.paths['/v1/tenants/{id}']?.get).toBeDefined();
  });
});

/** A row's created_at to the microsecond, as RFC 3339 UTC text (node-postgres' Date would keep milliseconds). */
async function exactCreatedAt(table: 'jobs' | 'settlements', id: string): Promise<string> {
  const result = await db.pool.query<{ at: string }>(
    `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at from ${table} where id = $1`,
    [id],
  );
  return result.rows[0]!.at;
}

/** The instant one microsecond after an RFC 3339 UTC instant with microseconds (…T10:00:00.123456Z), exactly. */
function plusMicrosecond(at: string): string {
  const match = /^(.*T\d{2}:\d{2}:\d{2})\.(\d{6})Z$/.exec(at);
  if (!match) throw new Error(`expected an instant with microseconds, got ${at}`);
  const micros = BigInt(Date.parse(`${match[1]}Z`)) * 1000n + BigInt(match[2]!) + 1n;
  const seconds = new Date(Number(micros / 1_000_000n) * 1000).toISOString().slice(0, 19);
  return `${seconds}.${(micros % 1_000_000n).toString().padStart(6, '0')}Z`;
}
