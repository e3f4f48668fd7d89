import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GRANT_STATUSES } from '../../src/funds/grant-status.js';
import { Client, deliver, signDelivery, type Answer } from '../support/client.js';
import { freshDatabase } from '../support/database.js';
import { startServer, waitUntil } from '../support/server.js';
import { completion, createWorld, submitJob, type World } from '../support/world.js';

/**
 * Credit grants over HTTP (CONTRACT.md "Credit grants"): creating one (Idempotency-Key
 * required and kept for ever), reading one and a wallet's list with its filters and
 * cursors, voiding; the draw-down order seen in a job's funding; the wallet's totals by
 * category, debt and next expiry after reservations, an expiry and a void; the
 * statement's totals by category; the tenants' grant.* messages. Every answer is checked
 * against its route's schema by the server (TALLY_CHECK_RESPONSES=1).
 */

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 1, env: { TALLY_OUTBOUND_ALLOW: '127.0.0.1', TALLY_POLL_INTERVAL_MS: '50' } });
const admin = new Client(server.url);

const key = () => ({ 'idempotency-key': randomUUID() });
const grantsOf = (world: World) => `/v1/wallets/${world.walletId}/grants`;

function expectError(answer: Answer, status: number, code: string, param?: string): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.body.error.code).toBe(code);
  if (param !== undefined) expect(answer.body.error.param).toBe(param);
}

async function grant(world: World, body: Record<string, unknown>, headers = key()): Promise<any> {
  const answer = await admin.post(grantsOf(world), body, headers);
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

/** An instant `seconds` from now, as RFC 3339. */
const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();

/** Everything a wallet's grants list holds, page by page (limit 2, to walk the cursors). */
async function allGrants(client: Client, world: World, query = ''): Promise<any[]> {
  const items: any[] = [];
  let after: string | null = null;
  for (;;) {
    const page: Answer = await client.get(`${grantsOf(world)}?limit=2${query}${after ? `&starting_after=${after}` : ''}`);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    items.push(...page.body.data);
    if (!page.body.has_more) return items;
    after = page.body.data.at(-1).id;
  }
}

/** The tenant's outbound messages of grant types, as enqueued (in order). */
async function grantMessages(world: World): Promise<{ type: string; data: any }[]> {
  const rows = await db.pool.query<{ type: string; payload: any }>(
    `select type, payload from outbound_messages where tenant_id = $1 and type like 'grant.%' order by created_at, id`,
    [world.tenantId],
  );
  return rows.rows.map((r) => ({ type: r.type, data: r.payload.data }));
}

/** A world whose tenant listens to everything, so every message is written. */
async function listeningWorld(options: Parameters<typeof createWorld>[1] = {}): Promise<World> {
  const world = await createWorld(admin, options);
  const endpoint = await world.tenant.post('/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks', events: ['*'] });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  return world;
}

describe('POST /v1/wallets/{id}/grants', () => {
  it('creates a grant with the defaults, active at once, and replays it for the same key', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const headers = key();
    const body = { amount: '12.50', category: 'promotional', reference: 'spring', metadata: { campaign: 'c1' } };
    const before = new Date().toISOString();
    const first = await admin.post(grantsOf(world), body, headers);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toEqual({
      id: expect.any(String),
      wallet_id: world.walletId,
      category: 'promotional',
      priority: 50,
      amount: '12.500000',
      remaining: '12.500000',
      held: '0.000000',
      status: 'active',
      effective_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      expires_at: null,
      expired_amount: '0.000000',
      voided_amount: '0.000000',
      source: 'grant',
      payment: null,
      reference: 'spring',
      metadata: { campaign: 'c1' },
      created_at: first.body.effective_at,
    });
    expect(first.body.created_at >= before.slice(0, 19)).toBe(true);

    const again = await admin.post(grantsOf(world), body, headers);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expectError(await admin.post(grantsOf(world), { ...body, amount: '13.00' }, headers), 422, 'idempotency_key_reused');
    // The URL's spelling does not make another call: upper-case wallet id, same key.
    const shouted = await admin.post(`/v1/wallets/${world.walletId.toUpperCase()}/grants`, body, headers);
    expect(shouted.body.id).toBe(first.body.id);
    expect(await allGrants(admin, world)).toHaveLength(1);

    const entries = (await world.tenant.get(`/v1/wallets/${world.walletId}/entries`)).body.data;
    expect(entries.map((e: any) => [e.entry_type, e.amount])).toEqual([['grant', '12.500000']]);
  });

  it('takes priority, effective_at and expires_at: a grant effective later is scheduled and brings nothing yet', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const expires = inSeconds(86_400);
    const soon = await grant(world, { amount: '1.00', category: 'paid', priority: 7, expires_at: expires });
    expect(soon).toMatchObject({ priority: 7, status: 'active', category: 'paid', remaining: '1.000000' });
    expect(soon.expires_at.slice(0, 23)).toBe(expires.slice(0, 23));
    const later = await grant(world, {
      amount: '2.00',
      category: 'promotional',
      effective_at: inSeconds(3600),
      expires_at: inSeconds(7200),
    });
    expect(later).toMatchObject({ status: 'scheduled', amount: '2.000000', remaining: '0.000000', held: '0.000000' });
    // An instant with an offset is the same instant in UTC, kept to the microsecond.
    const offset = await grant(world, { amount: '1.00', category: 'paid', effective_at: '2020-01-01T01:00:00.123456+01:00' });
    expect(offset).toMatchObject({ effective_at: '2020-01-01T00:00:00.123456Z', status: 'active' });
  });

  it('refuses what it cannot create, storing nothing', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const valid = { amount: '1.00', category: 'paid' };
    expectError(await admin.post(grantsOf(world), valid), 400, 'idempotency_key_required', 'Idempotency-Key');
    expectError(await world.tenant.post(grantsOf(world), valid, key()), 403, 'forbidden');
    expectError(await admin.as(null).post(grantsOf(world), valid, key()), 401, 'unauthorized');
    expectError(await admin.as('wrong').post(grantsOf(world), valid, key()), 401, 'unauthorized');
    expectError(await admin.post(`/v1/wallets/${randomUUID()}/grants`, valid, key()), 404, 'not_found');
    expectError(await admin.post('/v1/wallets/not-a-wallet/grants', valid, key()), 404, 'not_found');
    for (const amount of ['0', '-1.00', '1e3', '1.0000001', ' 1', '10000000000000', 5]) {
      expectError(await admin.post(grantsOf(world), { ...valid, amount }, key()), 400, 'invalid_amount');
    }
    expectError(await admin.post(grantsOf(world), { ...valid, category: 'gift' }, key()), 400, 'invalid_request', 'category');
    expectError(await admin.post(grantsOf(world), { amount: '1.00' }, key()), 400, 'invalid_request', 'category');
    for (const priority of [-1, 101, 1.5, '5']) {
      expectError(await admin.post(grantsOf(world), { ...valid, priority }, key()), 400, 'invalid_request', 'priority');
    }
    expectError(await admin.post(grantsOf(world), { ...valid, expires_at: 'tomorrow' }, key()), 400, 'invalid_request', 'expires_at');
    expectError(
      await admin.post(grantsOf(world), { ...valid, effective_at: '2026-02-31T00:00:00Z' }, key()),
      400,
      'invalid_request',
      'effective_at',
    );
    expectError(await admin.post(grantsOf(world), { ...valid, surprise: 1 }, key()), 400, 'invalid_request');
    // An expiry in the past, or not after the grant takes effect.
    expectError(await admin.post(grantsOf(world), { ...valid, expires_at: inSeconds(-60) }, key()), 400, 'invalid_expiry', 'expires_at');
    const start = inSeconds(3600);
    expectError(
      await admin.post(grantsOf(world), { ...valid, effective_at: start, expires_at: start }, key()),
      400,
      'invalid_expiry',
      'expires_at',
    );
    expectError(
      await admin.post(grantsOf(world), { ...valid, effective_at: inSeconds(7200), expires_at: inSeconds(3600) }, key()),
      400,
      'invalid_expiry',
    );
    // A refusal by validation stores nothing: the same key works once corrected.
    const headers = key();
    expectError(await admin.post(grantsOf(world), { ...valid, expires_at: inSeconds(-60) }, headers), 400, 'invalid_expiry');
    expect((await admin.post(grantsOf(world), valid, headers)).status).toBe(201);
    expect(await allGrants(admin, world)).toHaveLength(1);
  });

  it('keeps its idempotency record for ever, through the cleanup duty', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const headers = key();
    const first = await admin.post(grantsOf(world), { amount: '3.00', category: 'promotional' }, headers);
    expect(first.status).toBe(201);
    const hashed = `encode(sha256(convert_to($1, 'UTF8')), 'hex')`;
    await db.pool.query(`update idempotency_keys set created_at = now() - interval '400 days' where key = ${hashed}`, [
      headers['idempotency-key'],
    ]);
    const sentinel = randomUUID();
    await db.pool.query(
      `insert into idempotency_keys (tenant_id, principal, method, route, path, key, request_hash, response_status, response_body, created_at)
       values ('00000000-0000-0000-0000-000000000000', 'admin', 'POST', '/v1/tenants', '/v1/tenants', $1, '\\x00', 201, '{}', now() - interval '10 years')`,
      [sentinel],
    );
    await db.pool.query(`update duties set last_run_at = 'epoch' where name = 'idempotency_cleanup'`);
    await waitUntil(async () => (await db.pool.query('select 1 from idempotency_keys where key = $1', [sentinel])).rowCount === 0);
    const again = await admin.post(grantsOf(world), { amount: '3.00', category: 'promotional' }, headers);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await allGrants(admin, world)).toHaveLength(1);
  });
});

describe('GET /v1/grants/{id} and GET /v1/wallets/{id}/grants', () => {
  it("shows a tenant its own grants only: 404 alike for malformed, unknown and another tenant's", async () => {
    const world = await createWorld(admin, { credit: '0' });
    const other = await createWorld(admin, { credit: '0' });
    const given = await grant(world, { amount: '4.00', category: 'paid' });
    expect((await world.tenant.get(`/v1/grants/${given.id}`)).body).toEqual(given);
    expect((await admin.get(`/v1/grants/${given.id}`)).body).toEqual(given);
    expect((await world.tenant.get(`/v1/grants/${given.id.toUpperCase()}`)).body).toEqual(given);
    for (const id of [randomUUID(), 'nope', given.id]) {
      const client = id === given.id ? other.tenant : world.tenant;
      expectError(await client.get(`/v1/grants/${id}`), 404, 'not_found');
    }
    expectError(await admin.as(null).get(`/v1/grants/${given.id}`), 401, 'unauthorized');
    expectError(await other.tenant.get(grantsOf(world)), 404, 'not_found');
    expectError(await world.tenant.get(`/v1/wallets/${randomUUID()}/grants`), 404, 'not_found');
    expect((await world.tenant.get(grantsOf(world))).body).toEqual({ data: [given], has_more: false });
  });

  it('lists newest first with cursors both ways, filters by category, and refuses bad filters and cursors', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const made: any[] = [];
    for (const category of ['paid', 'promotional', 'paid', 'promotional', 'paid'])
      made.push(await grant(world, { amount: '1.00', category }));
    const newestFirst = [...made].reverse().map((g) => g.id);
    expect((await allGrants(world.tenant, world)).map((g) => g.id)).toEqual(newestFirst);
    const page = (await world.tenant.get(`${grantsOf(world)}?limit=2&ending_before=${made[0].id}`)).body;
    expect(page).toEqual({ data: [made[2], made[1]], has_more: true });
    const head = (await world.tenant.get(`${grantsOf(world)}?ending_before=${made[3].id}`)).body;
    expect(head).toEqual({ data: [made[4]], has_more: false });
    expect((await allGrants(world.tenant, world, '&category=promotional')).map((g) => g.id)).toEqual([made[3].id, made[1].id]);
    expect((await allGrants(world.tenant, world, '&category=paid&status=active')).map((g) => g.id)).toEqual([
      made[4].id,
      made[2].id,
      made[0].id,
    ]);

    expectError(await world.tenant.get(`${grantsOf(world)}?status=gone`), 400, 'invalid_request', 'status');
    expectError(await world.tenant.get(`${grantsOf(world)}?category=gift`), 400, 'invalid_request', 'category');
    expectError(await world.tenant.get(`${grantsOf(world)}?limit=101`), 400, 'invalid_request', 'limit');
    expectError(await world.tenant.get(`${grantsOf(world)}?starting_after=nope`), 400, 'invalid_cursor', 'starting_after');
    expectError(await world.tenant.get(`${grantsOf(world)}?starting_after=${randomUUID()}`), 400, 'invalid_cursor', 'starting_after');
    const stranger = await createWorld(admin, { credit: '0' });
    const theirs = await grant(stranger, { amount: '1.00', category: 'paid' });
    expectError(await world.tenant.get(`${grantsOf(world)}?ending_before=${theirs.id}`), 400, 'invalid_cursor', 'ending_before');
    expectError(await world.tenant.get(`${grantsOf(world)}?wallet=1`), 400, 'invalid_request');
  });

  it('shows every status, and the status filter agrees with the status each grant shows', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const active = await grant(world, { amount: '5.00', category: 'paid' });
    const scheduled = await grant(world, { amount: '1.00', category: 'paid', effective_at: inSeconds(3600) });
    const expiring = await grant(world, {
      amount: '1.00',
      category: 'promotional',
      effective_at: inSeconds(-3600),
      expires_at: inSeconds(3600),
    });
    const voided = await grant(world, { amount: '1.00', category: 'promotional' });
    const depleted = await grant(world, { amount: '1.00', category: 'paid' });
    const disputed = await grant(world, { amount: '1.00', category: 'paid' });
    const awaiting = await grant(world, { amount: '1.00', category: 'paid', effective_at: inSeconds(3600) });
    const canceled = await grant(world, { amount: '1.00', category: 'paid', effective_at: inSeconds(3600) });
    expect((await admin.post(`/v1/grants/${voided.id}/void`, { note: 'mistake' })).status).toBe(200);
    // What no call makes yet (payments) or takes long (spending, time), set by SQL.
    await db.pool.query(`update grants set expires_at = clock_timestamp() - interval '1 second' where id = $1`, [expiring.id]);
    await db.pool.query(`update grants set remaining = 0 where id = $1`, [depleted.id]);
    await db.pool.query(`update grants set disputed = true where id = $1`, [disputed.id]);
    await db.pool.query(`update grants set source = 'stripe_checkout' where id = any($1::uuid[])`, [[awaiting.id, canceled.id]]);
    await db.pool.query(`update grants set canceled_at = clock_timestamp() where id = $1`, [canceled.id]);

    const expected: Record<string, string> = {
      [active.id]: 'active',
      [scheduled.id]: 'scheduled',
      [expiring.id]: 'expired',
      [voided.id]: 'voided',
      [depleted.id]: 'depleted',
      [disputed.id]: 'disputed',
      [awaiting.id]: 'awaiting_payment',
      [canceled.id]: 'canceled',
    };
    const all = await allGrants(world.tenant, world);
    expect(Object.fromEntries(all.map((g) => [g.id, g.status]))).toEqual(expected);
    for (const [id, status] of Object.entries(expected)) expect((await world.tenant.get(`/v1/grants/${id}`)).body.status).toBe(status);
    for (const status of GRANT_STATUSES) {
      const filtered = await allGrants(world.tenant, world, `&status=${status}`);
      expect(
        filtered.map((g) => g.id),
        status,
      ).toEqual(all.filter((g) => g.status === status).map((g) => g.id));
    }
    // The money stays where the writers put it: the SQL above moved no entry, so put it back.
    await db.pool.query(`update grants set remaining = 1000000, disputed = false where id = any($1::uuid[])`, [[depleted.id, disputed.id]]);
  });
});

describe('POST /v1/grants/{id}/void', () => {
  it('voids once: the unheld remaining leaves as grant_void; a second void is 409 grant_voided', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const given = await grant(world, { amount: '2.00', category: 'promotional' });
    expectError(await admin.post(`/v1/grants/${given.id}/void`, {}), 400, 'invalid_request', 'note');
    expectError(await admin.post(`/v1/grants/${given.id}/void`, { note: '   ' }), 400, 'invalid_request', 'note');
    expectError(await world.tenant.post(`/v1/grants/${given.id}/void`, { note: 'x' }), 403, 'forbidden');
    expectError(await admin.post(`/v1/grants/${randomUUID()}/void`, { note: 'x' }), 404, 'not_found');
    expectError(await admin.post('/v1/grants/nope/void', { note: 'x' }), 404, 'not_found');
    const voided = await admin.post(`/v1/grants/${given.id}/void`, { note: 'granted by mistake' });
    expect(voided.status, JSON.stringify(voided.body)).toBe(200);
    expect(voided.body).toEqual({ ...given, status: 'voided', remaining: '0.000000', voided_amount: '2.000000' });
    expectError(await admin.post(`/v1/grants/${given.id}/void`, { note: 'again' }), 409, 'grant_voided');
    const entries = (await world.tenant.get(`/v1/wallets/${world.walletId}/entries`)).body.data;
    expect(entries.map((e: any) => [e.entry_type, e.amount, e.reference])).toEqual([
      ['grant_void', '-2.000000', 'granted by mistake'],
      ['grant', '2.000000', null],
    ]);
  });

  it('voids a scheduled grant with no entry: it never brought anything', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const given = await grant(world, { amount: '2.00', category: 'paid', effective_at: inSeconds(3600) });
    const voided = await admin.post(`/v1/grants/${given.id}/void`, { note: 'campaign called off' }, key());
    expect(voided.body).toMatchObject({ status: 'voided', remaining: '0.000000', voided_amount: '0.000000' });
    expect((await world.tenant.get(`/v1/wallets/${world.walletId}/entries`)).body.data).toEqual([]);
  });
});

describe('drawing down grants', () => {
  it('funds a job from the grant of lowest priority first, then the soonest expiry, before a credit; the capture consumes in that order', async () => {
    const world = await listeningWorld({ credit: '1.00' });
    const credit = (await allGrants(admin, world))[0];
    const expiring = await grant(world, { amount: '0.004', category: 'paid', expires_at: inSeconds(86_400) });
    const promo = await grant(world, { amount: '0.010', category: 'promotional', priority: 10, expires_at: inSeconds(7 * 86_400) });
    const job = await submitJob(world); // reserves 0.02: promo 0.010, expiring 0.004, credit 0.006
    const view = (await world.tenant.get(`/v1/jobs/${job.id}`)).body;
    const share = (grantId: string, category: string, held: string, captured = '0.000000', returned = '0.000000') => ({
      grant_id: grantId,
      category,
      held,
      captured,
      returned,
      refunded: '0.000000',
      adjusted: '0.000000',
    });
    expect(view.funding).toEqual([
      share(promo.id, 'promotional', '0.010000'),
      share(expiring.id, 'paid', '0.004000'),
      share(credit.id, 'paid', '0.006000'),
    ]);
    expect((await world.tenant.get(`/v1/grants/${promo.id}`)).body).toMatchObject({
      remaining: '0.010000',
      held: '0.010000',
      status: 'active',
    });

    // Usage worth 0.012: the promo is used up, then 0.002 of the expiring grant; the rest returns.
    await deliver(server.url, world.provider, signDelivery(completion(world, job.id, { input_tokens: 10_000, output_tokens: 1_000 })));
    await waitUntil(async () => (await world.tenant.get(`/v1/jobs/${job.id}`)).body.state === 'captured');
    const settled = (await world.tenant.get(`/v1/jobs/${job.id}`)).body;
    expect(settled.captured).toBe('0.012000');
    expect(settled.funding).toEqual([
      share(promo.id, 'promotional', '0.010000', '0.010000', '0.000000'),
      share(expiring.id, 'paid', '0.004000', '0.002000', '0.002000'),
      share(credit.id, 'paid', '0.006000', '0.000000', '0.006000'),
    ]);
    expect((await world.tenant.get(`/v1/grants/${promo.id}`)).body).toMatchObject({
      remaining: '0.000000',
      held: '0.000000',
      status: 'depleted',
    });
    expect((await world.tenant.get(`/v1/grants/${expiring.id}`)).body).toMatchObject({ remaining: '0.002000', held: '0.000000' });
    // The capture is one entry per grant, each naming it, under one settlement.
    const captures = (await world.tenant.get(`/v1/wallets/${world.walletId}/entries?entry_type=capture`)).body.data;
    expect(captures.map((e: any) => e.settlement_key)).toEqual([settled.settlements[0].key, settled.settlements[0].key]);

    const messages = await grantMessages(world);
    expect(messages.filter((m) => m.type === 'grant.depleted')).toEqual([
      { type: 'grant.depleted', data: { grant_id: promo.id, wallet_id: world.walletId, currency: 'USD', category: 'promotional' } },
    ]);
  });
});

describe('grant messages', () => {
  it('announces created, activated, expired and voided in the transactions of their effects', async () => {
    const world = await listeningWorld({ credit: '0' });
    const base = { wallet_id: world.walletId, currency: 'USD' };
    const credit = await admin.post(`/v1/wallets/${world.walletId}/credits`, { amount: '2.00' }, key());
    expect(credit.status).toBe(201);
    const creditGrant = (await allGrants(admin, world))[0];
    const promo = await grant(world, {
      amount: '1.50',
      category: 'promotional',
      effective_at: inSeconds(-60),
      expires_at: inSeconds(3600),
      reference: 'r1',
    });
    const later = await grant(world, { amount: '0.50', category: 'paid', priority: 3, effective_at: inSeconds(3600) });
    await admin.post(`/v1/grants/${later.id}/void`, { note: 'not needed' });
    await db.pool.query(`update grants set expires_at = clock_timestamp() - interval '1 second' where id = $1`, [promo.id]);
    // The worker's expiry sweep posts it within seconds.
    await waitUntil(async () => (await grantMessages(world)).some((m) => m.type === 'grant.expired'), 20_000);

    const messages = await grantMessages(world);
    expect(messages).toEqual([
      {
        type: 'grant.created',
        data: {
          ...base,
          grant_id: creditGrant.id,
          category: 'paid',
          amount: '2.000000',
          priority: 50,
          source: 'credit',
          status: 'active',
          effective_at: creditGrant.effective_at,
          expires_at: null,
          reference: null,
        },
      },
      { type: 'grant.activated', data: { ...base, grant_id: creditGrant.id, category: 'paid', amount: '2.000000' } },
      {
        type: 'grant.created',
        data: {
          ...base,
          grant_id: promo.id,
          category: 'promotional',
          amount: '1.500000',
          priority: 50,
          source: 'grant',
          status: 'active',
          effective_at: promo.effective_at,
          expires_at: promo.expires_at,
          reference: 'r1',
        },
      },
      { type: 'grant.activated', data: { ...base, grant_id: promo.id, category: 'promotional', amount: '1.500000' } },
      {
        type: 'grant.created',
        data: {
          ...base,
          grant_id: later.id,
          category: 'paid',
          amount: '0.500000',
          priority: 3,
          source: 'grant',
          status: 'scheduled',
          effective_at: later.effective_at,
          expires_at: null,
          reference: null,
        },
      },
      { type: 'grant.voided', data: { ...base, grant_id: later.id, category: 'paid', voided_amount: '0.000000', note: 'not needed' } },
      { type: 'grant.expired', data: { ...base, grant_id: promo.id, category: 'promotional', expired_amount: '1.500000' } },
    ]);
    expect((await world.tenant.get(`/v1/grants/${promo.id}`)).body).toMatchObject({
      status: 'expired',
      remaining: '0.000000',
      expired_amount: '1.500000',
    });
    // A refused call announces nothing.
    await admin.post(grantsOf(world), { amount: '1.00', category: 'paid', expires_at: inSeconds(-5) }, key());
    expect(await grantMessages(world)).toHaveLength(messages.length);
  });
});

describe('the wallet, its entries and its statement', () => {
  const wallet = async (world: World) => (await world.tenant.get(`/v1/wallets/${world.walletId}`)).body;
  const money = (paid: string, promotional: string) => ({ paid, promotional });

  it('shows balance by category, debt, next expiry and an available that grants allow, after a reservation, an expiry and a void', async () => {
    const world = await createWorld(admin, { credit: '10.00' });
    const promo = await grant(world, {
      amount: '2.00',
      category: 'promotional',
      priority: 10,
      effective_at: inSeconds(-3600),
      expires_at: inSeconds(3600),
    });
    const paid = await grant(world, { amount: '1.00', category: 'paid', expires_at: inSeconds(86_400) });
    expect(await wallet(world)).toMatchObject({
      balance: '13.000000',
      reserved: '0.000000',
      available: '13.000000',
      balance_by_category: money('11.000000', '2.000000'),
      debt: '0.000000',
      next_expiry: { at: promo.expires_at, amount: '2.000000' },
    });

    const job = await submitJob(world, { input_tokens: 1_000_000 }); // reserves 1.00, all on the promo
    expect((await world.tenant.get(`/v1/jobs/${job.id}`)).body.funding.map((s: any) => [s.grant_id, s.held])).toEqual([
      [promo.id, '1.000000'],
    ]);
    expect(await wallet(world)).toMatchObject({
      balance: '13.000000',
      reserved: '1.000000',
      available: '12.000000',
      balance_by_category: money('11.000000', '2.000000'),
      next_expiry: { at: promo.expires_at, amount: '1.000000' },
    });

    // The promo's expiry comes: at once it funds nothing, before its sweep posts.
    await db.pool.query(`update grants set expires_at = clock_timestamp() - interval '1 millisecond' where id = $1`, [promo.id]);
    expect(await wallet(world)).toMatchObject({
      available: '11.000000',
      reserved: '1.000000',
      next_expiry: { at: paid.expires_at, amount: '1.000000' },
    });
    expect((await world.tenant.get(`/v1/grants/${promo.id}`)).body.status).toBe('expired');
    await waitUntil(async () => (await world.tenant.get(`/v1/grants/${promo.id}`)).body.expired_amount === '1.000000');
    expect(await wallet(world)).toMatchObject({
      balance: '12.000000',
      reserved: '1.000000',
      available: '11.000000',
      balance_by_category: money('11.000000', '1.000000'),
      debt: '0.000000',
    });

    // The held share stays with its job: captured in part, the rest leaves as it returns.
    await deliver(server.url, world.provider, signDelivery(completion(world, job.id, { input_tokens: 500_000 })));
    await waitUntil(async () => (await world.tenant.get(`/v1/jobs/${job.id}`)).body.state === 'captured');
    expect((await world.tenant.get(`/v1/jobs/${job.id}`)).body.funding).toEqual([
      { grant_id: promo.id, category: 'promotional', held: '1.000000', captured: '0.500000', returned: '0.500000', refunded: '0.000000', adjusted: '0.000000' },
    ]);
    expect((await world.tenant.get(`/v1/grants/${promo.id}`)).body).toMatchObject({
      remaining: '0.000000',
      held: '0.000000',
      expired_amount: '1.500000',
    });
    expect(await wallet(world)).toMatchObject({
      balance: '11.000000',
      reserved: '0.000000',
      available: '11.000000',
      balance_by_category: money('11.000000', '0.000000'),
    });

    expect((await admin.post(`/v1/grants/${paid.id}/void`, { note: 'refunded elsewhere' })).status).toBe(200);
    const after = await wallet(world);
    expect(after).toMatchObject({
      balance: '10.000000',
      reserved: '0.000000',
      available: '10.000000',
      balance_by_category: money('10.000000', '0.000000'),
      debt: '0.000000',
      next_expiry: null,
    });
    // The list shows each wallet as its own view does; ?at= is the running values only.
    const listed = (await world.tenant.get('/v1/wallets')).body.data;
    expect(listed).toEqual([after]);
    const at = (await world.tenant.get(`/v1/wallets/${world.walletId}?at=${encodeURIComponent(new Date(Date.now() - 1000).toISOString())}`))
      .body;
    expect(Object.keys(at).sort()).toEqual([
      'at',
      'available',
      'balance',
      'created_at',
      'currency',
      'id',
      'metadata',
      'reserved',
      'sequence',
      'tenant_id',
    ]);
    const opened = await world.tenant.post('/v1/wallets', { currency: 'EUR' });
    expect(opened.body).toMatchObject({
      balance: '0.000000',
      available: '0.000000',
      balance_by_category: money('0.000000', '0.000000'),
      debt: '0.000000',
      next_expiry: null,
    });
  });

  it('shows a debt no grant covered, paid first by the next credit; entries name their grants; the statement totals by category', async () => {
    const world = await createWorld(admin, { credit: '0.02' });
    const from = new Date(Date.now() - 60_000).toISOString();
    const first = await submitJob(world); // reserves 0.02
    await deliver(server.url, world.provider, signDelivery(completion(world, first.id, { input_tokens: 1000, output_tokens: 0 })));
    await waitUntil(async () => (await world.tenant.get(`/v1/jobs/${first.id}`)).body.state === 'captured'); // 0.001
    const second = await submitJob(world, { input_tokens: 19_000 }); // holds the remaining 0.019
    await deliver(
      server.url,
      world.provider,
      signDelivery(completion(world, first.id, { input_tokens: 10_000, output_tokens: 5_000 }, 'job.usage_corrected', { correction: 1 })),
    );
    await waitUntil(async () => (await world.tenant.get(`/v1/jobs/${first.id}`)).body.adjusted === '0.019000');
    expect(await wallet(world)).toMatchObject({
      balance: '0.000000',
      reserved: '0.019000',
      available: '-0.019000',
      balance_by_category: money('0.019000', '0.000000'),
      debt: '0.019000',
    });
    const credit = await admin.post(`/v1/wallets/${world.walletId}/credits`, { amount: '1.00' }, key());
    expect(credit.status).toBe(201);
    const creditGrant = (await allGrants(admin, world, '&status=active'))[0];
    expect(credit.body.grant_id).toBe(creditGrant.id);
    expect(creditGrant).toMatchObject({ source: 'credit', amount: '1.000000', remaining: '0.981000' });
    expect(await wallet(world)).toMatchObject({ balance: '1.000000', reserved: '0.019000', available: '0.981000', debt: '0.000000' });

    const entries = (await world.tenant.get(`/v1/wallets/${world.walletId}/entries?limit=100`)).body.data.reverse();
    const opening = (await allGrants(admin, world)).find((g: any) => g.id !== creditGrant.id)!;
    expect(entries.map((e: any) => [e.entry_type, e.amount, e.grant_id])).toEqual([
      ['credit', '0.020000', opening.id],
      ['reserve', '-0.020000', opening.id],
      ['capture', '-0.001000', opening.id],
      ['release_remainder', '0.019000', opening.id],
      ['reserve', '-0.019000', opening.id],
      ['adjustment', '-0.019000', null],
      ['credit', '1.000000', creditGrant.id],
      ['debt_repayment', '0.019000', creditGrant.id],
    ]);
    expect(entries.at(-2)).toMatchObject({ id: credit.body.id, grant_id: creditGrant.id });
    await deliver(server.url, world.provider, signDelivery(completion(world, second.id, {}, 'job.failed')));
    await waitUntil(async () => (await world.tenant.get(`/v1/jobs/${second.id}`)).body.state === 'released');

    // A promotional grant, spent in part, for the statement's second category.
    await grant(world, { amount: '0.50', category: 'promotional', priority: 1 });
    const third = await submitJob(world, { input_tokens: 100_000 }); // 0.10 on the promo
    await deliver(server.url, world.provider, signDelivery(completion(world, third.id, { input_tokens: 40_000 })));
    await waitUntil(async () => (await world.tenant.get(`/v1/jobs/${third.id}`)).body.state === 'captured'); // 0.04
    await new Promise((resolve) => setTimeout(resolve, 5));
    const to = new Date().toISOString();
    const statement = (await world.tenant.get(`/v1/wallets/${world.walletId}/statement?from=${from}&to=${to}`)).body;
    expect(statement.opening).toEqual({ balance: '0.000000', reserved: '0.000000', available: '0.000000' });
    expect(statement.closing).toEqual({ balance: '1.460000', reserved: '0.000000', available: '1.460000' });
    const byCategory = Object.fromEntries(statement.totals_by_category.map((t: any) => [t.category, t]));
    expect(statement.totals_by_category.map((t: any) => t.category)).toEqual(['paid', 'promotional', 'unassigned']);
    // paid: 0.02 − 0.001 + 1.00 − 0.019 (it paid the debt); promotional: 0.50 − 0.04; unassigned: the debt made and repaid.
    const changes = (balance: string) => ({ balance_change: balance, reserved_change: '0.000000', available_change: balance });
    expect(byCategory.paid).toEqual({ category: 'paid', count: 8, ...changes('1.000000') });
    expect(byCategory.promotional).toEqual({ category: 'promotional', count: 4, ...changes('0.460000') });
    expect(byCategory.unassigned).toEqual({ category: 'unassigned', count: 1, ...changes('0.000000') });
    expect(statement.lines).toHaveLength(13);
  });
});
