import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { ADMIN_TOKEN, startServer } from '../support/server.js';
import { Client, TEST_SECRET, type Answer } from '../support/client.js';
import { createWorld, submitJob, type World } from '../support/world.js';
import { countRows, expectError } from '../support/refusal.js';
import { openedProviderSecrets } from '../support/stored-secrets.js';

/**
 * Who may call what (CONTRACT "HTTP API"): 401 without a valid credential, 403 for a
 * tenant key on an admin call, and a tenant sees only its own objects — another
 * tenant's id answers exactly like an id that does not exist.
 */

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 1 });
const admin = new Client(server.url);

const EVERY_TABLE = [
  'tenants', 'api_keys', 'providers', 'price_versions', 'accounts', 'jobs', 'holds', 'ledger_entries', 'settlements',
  'webhook_events', 'idempotency_keys', 'provider_usage', 'reconciliation_runs',
] as const;

async function secretsOf(provider: string): Promise<string[]> {
  return (await openedProviderSecrets(db.pool, provider))!;
}

interface Call {
  name: string;
  send: (client: Client) => Promise<Answer>;
}

/** Every admin call of the CONTRACT, each with a valid body. */
function adminCalls(world: World): Call[] {
  return [
    { name: 'POST /v1/tenants', send: (c) => c.post('/v1/tenants', { name: 'intruder' }, { 'idempotency-key': randomUUID() }) },
    { name: 'POST /v1/providers', send: (c) => c.post('/v1/providers', { name: `p-${randomUUID().slice(0, 8)}`, kind: 'generic', secrets: [TEST_SECRET] }) },
    { name: 'PATCH /v1/providers/{name}', send: (c) => c.request('PATCH', `/v1/providers/${world.provider}`, { secrets: [`whsec_${randomBytes(24).toString('base64')}`] }) },
    { name: 'PUT /v1/prices/{model}', send: (c) => c.request('PUT', `/v1/prices/${encodeURIComponent(world.model)}`, { currency: 'USD', unit_prices: { input_tokens: '0.000001' } }) },
    { name: 'POST /v1/wallets/{id}/credits', send: (c) => c.post(`/v1/wallets/${world.walletId}/credits`, { amount: '1000000.00' }, { 'idempotency-key': randomUUID() }) },
    { name: 'POST /v1/events/{provider}/{key}/retry', send: (c) => c.post(`/v1/events/${world.provider}/msg_x/retry`) },
    {
      name: 'POST /v1/provider-usage',
      send: (c) => c.post('/v1/provider-usage', { import_id: randomUUID(), records: [{ provider: world.provider, provider_job_ref: 'pj_1', usage: { input_tokens: 1 } }] }),
    },
    { name: 'POST /v1/reconciliation/runs', send: (c) => c.post('/v1/reconciliation/runs', { repair: true }) },
    { name: 'GET /v1/reconciliation/runs/{id}', send: (c) => c.get(`/v1/reconciliation/runs/${randomUUID()}`) },
    { name: 'POST /v1/reconciliation/exceptions/{id}/resolve', send: (c) => c.post(`/v1/reconciliation/exceptions/${randomUUID()}/resolve`, { note: 'looked at it' }) },
  ];
}

/** Every tenant call, on the world's own objects, each with a valid body. */
function tenantCalls(world: World, jobId: string): Call[] {
  return [
    { name: 'POST /v1/wallets', send: (c) => c.post('/v1/wallets', { currency: 'JPY' }) },
    { name: 'GET /v1/wallets/{id}', send: (c) => c.get(`/v1/wallets/${world.walletId}`) },
    { name: 'GET /v1/wallets/{id}/entries', send: (c) => c.get(`/v1/wallets/${world.walletId}/entries`) },
    {
      name: 'POST /v1/jobs',
      send: (c) => c.post('/v1/jobs', { wallet_id: world.walletId, model: world.model, provider: world.provider, limits: { input_tokens: 10 } }, { 'idempotency-key': randomUUID() }),
    },
    { name: 'GET /v1/jobs/{id}', send: (c) => c.get(`/v1/jobs/${jobId}`) },
    { name: 'PATCH /v1/jobs/{id}', send: (c) => c.request('PATCH', `/v1/jobs/${jobId}`, { provider_job_ref: `pj_${randomUUID()}` }) },
    { name: 'POST /v1/jobs/{id}/cancel', send: (c) => c.post(`/v1/jobs/${jobId}/cancel`) },
  ];
}

/** Credentials that are not credentials: none, malformed, near misses of real ones. */
function wrongCredentials(world: World): [string, Client][] {
  const raw = (authorization: string) => new WrongScheme(server.url, authorization);
  return [
    ['no credential', admin.as(null)],
    ['a random token', admin.as(randomBytes(24).toString('base64url'))],
    ['a random tenant-looking key', admin.as(`tk_${randomBytes(32).toString('base64url')}`)],
    ['the admin token with a suffix', admin.as(`${ADMIN_TOKEN}x`)],
    ['a prefix of the admin token', admin.as(ADMIN_TOKEN.slice(0, -1))],
    ['the tenant key with a suffix', admin.as(`${world.apiKey}x`)],
    ['a prefix of the tenant key', admin.as(world.apiKey.slice(0, -1))],
    ['the admin token as Basic auth', raw(`Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`)],
    ['the admin token without a scheme', raw(ADMIN_TOKEN)],
    ['an empty bearer', raw('Bearer ')],
  ];
}

/** A client that sends the Authorization header verbatim. */
class WrongScheme extends Client {
  constructor(
    baseUrl: string,
    private readonly authorization: string,
  ) {
    super(baseUrl, null);
  }
  override request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    return super.request<T>(method, path, body, { ...headers, authorization: this.authorization });
  }
}

describe('credentials', () => {
  it('answers 401 unauthorized to every admin and tenant call without a valid credential, and writes nothing', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);
    const calls = [...adminCalls(world), ...tenantCalls(world, job.id)];
    const before = await countRows(db.pool, EVERY_TABLE);
    for (const [what, client] of wrongCredentials(world)) {
      for (const call of calls) {
        const answer = await call.send(client);
        expect.soft(answer.status, `${call.name} with ${what}`).toBe(401);
        expectError(answer, 401, 'unauthorized');
      }
    }
    expect(await countRows(db.pool, EVERY_TABLE)).toEqual(before);
    expect(await secretsOf(world.provider)).toEqual([TEST_SECRET]);
  });

  it('checks the credential before it looks at the request: an invalid body without a credential is still 401', async () => {
    const world = await createWorld(admin);
    const nobody = admin.as(null);
    const answers = [
      await nobody.post('/v1/tenants', {}),
      await nobody.post('/v1/providers', { name: 'NOT A NAME' }),
      await nobody.post(`/v1/wallets/${world.walletId}/credits`, { amount: '1e3' }),
      await nobody.post('/v1/jobs', { limits: 'none' }),
      await nobody.post('/v1/wallets', 'not json'),
      await nobody.get(`/v1/wallets/${'x'.repeat(300)}`),
    ];
    for (const answer of answers) expectError(answer, 401, 'unauthorized');
    const tenant = world.tenant;
    expectError(await tenant.post('/v1/tenants', {}), 403, 'forbidden');
    expectError(await tenant.post(`/v1/wallets/${world.walletId}/credits`, { amount: 12 }), 403, 'forbidden');
  });

  it('answers 403 forbidden to a tenant key on every admin call, and writes nothing', async () => {
    const world = await createWorld(admin, { credit: '5.00' });
    const before = await countRows(db.pool, EVERY_TABLE);
    for (const call of adminCalls(world)) {
      const answer = await call.send(world.tenant);
      expect.soft(answer.status, call.name).toBe(403);
      expectError(answer, 403, 'forbidden');
    }
    expect(await countRows(db.pool, EVERY_TABLE)).toEqual(before);
    expect(await secretsOf(world.provider)).toEqual([TEST_SECRET]);
    // Above all, a tenant cannot top up its own wallet.
    expect((await world.tenant.get(`/v1/wallets/${world.walletId}`)).body.balance).toBe('5.000000');
  });

  it('shows the api_key only when the tenant is created (and in its idempotent replay), and stores it hashed', async () => {
    const key = randomUUID();
    const created = await admin.post('/v1/tenants', { name: 'hashed' }, { 'idempotency-key': key });
    expect(created.status).toBe(201);
    const apiKey: string = created.body.api_key;
    expect(apiKey.length).toBeGreaterThanOrEqual(32);
    const replay = await admin.post('/v1/tenants', { name: 'hashed' }, { 'idempotency-key': key });
    expect(replay.body).toEqual(created.body);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const second = await admin.post('/v1/tenants', { name: 'hashed' });
    expect(second.body.api_key).not.toBe(apiKey);
    // The key works, and nothing it can read shows it again.
    const wallet = await admin.as(apiKey).post('/v1/wallets', { currency: 'USD' });
    expect(wallet.status).toBe(201);
    expect(JSON.stringify(wallet.body)).not.toContain(apiKey);

    // No column of api_keys holds the key: not as text, not as its bytes.
    const rows = await db.pool.query<{ row: string }>(
      `select row_to_json(k)::text as row from api_keys k where tenant_id = $1`,
      [created.body.id],
    );
    expect(rows.rows).toHaveLength(1);
    const hex = Buffer.from(apiKey).toString('hex');
    expect(rows.rows[0]!.row).not.toContain(apiKey);
    expect(rows.rows[0]!.row).not.toContain(hex);

    // Neither key is in any table, not even the one whose answer is kept for replay
    // (that answer is sealed with a key derived from the Idempotency-Key).
    const tables = await db.pool.query<{ table_name: string }>(
      `select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
    );
    for (const plain of [second.body.api_key as string, apiKey]) {
      for (const { table_name } of tables.rows) {
        const hits = await db.pool.query<{ n: number }>(
          `select count(*)::int as n from ${table_name} t where row_to_json(t)::text like '%' || $1 || '%' or row_to_json(t)::text like '%' || $2 || '%'`,
          [plain, Buffer.from(plain).toString('hex')],
        );
        expect(hits.rows[0]!.n, table_name).toBe(0);
      }
    }
  });
});

describe('tenant isolation', () => {
  it('answers another tenant\'s wallet, entries and job exactly like an unknown or malformed id: 404 not_found', async () => {
    const a = await createWorld(admin);
    const b = await createWorld(admin);
    const bJob = await submitJob(b);
    const ids = {
      "another tenant's": { wallet: b.walletId, job: bJob.id },
      unknown: { wallet: randomUUID(), job: randomUUID() },
      malformed: { wallet: 'not-a-uuid', job: 'not-a-uuid' },
      numeric: { wallet: '12345', job: '12345' },
      'a uuid with a suffix': { wallet: `${b.walletId}0`, job: `${bJob.id}0` },
      'very long': { wallet: 'w'.repeat(300), job: 'j'.repeat(300) },
      'longer than any path parameter': { wallet: 'w'.repeat(5000), job: 'j'.repeat(5000) },
      'bad percent-encoding': { wallet: '%E0%A4%A', job: '%zz' },
    };
    const reads = (wallet: string, job: string) => [
      a.tenant.get(`/v1/wallets/${wallet}`),
      a.tenant.get(`/v1/wallets/${wallet}/entries`),
      a.tenant.get(`/v1/jobs/${job}`),
      a.tenant.post(`/v1/jobs/${job}/cancel`),
      a.tenant.request('PATCH', `/v1/jobs/${job}`, { provider_job_ref: `pj_${randomUUID()}` }),
      a.tenant.post('/v1/jobs', { wallet_id: wallet, model: a.model, provider: a.provider, limits: { input_tokens: 10 } }, { 'idempotency-key': randomUUID() }),
    ];
    const before = await countRows(db.pool, EVERY_TABLE);
    const seen: Record<string, unknown[]> = {};
    for (const [kind, { wallet, job }] of Object.entries(ids)) {
      const answers = await Promise.all(reads(wallet, job));
      for (const answer of answers) expectError(answer, 404, 'not_found');
      seen[kind] = answers.map((answer) => [answer.status, answer.body.error.code]);
    }
    // Indistinguishable: the same status and code whatever made the id invisible.
    for (const kind of Object.keys(ids)) expect(seen[kind], kind).toEqual(seen["another tenant's"]);

    // Nothing of B's changed: the cancel and the patch did not reach its job.
    const bView = (await b.tenant.get(`/v1/jobs/${bJob.id}`)).body;
    expect(bView).toMatchObject({ state: 'reserved', provider_job_ref: null });
    const after = await countRows(db.pool, EVERY_TABLE);
    expect({ ...after, idempotency_keys: before.idempotency_keys }).toEqual(before);
  });

  it('lets the admin read any wallet and its entries', async () => {
    const a = await createWorld(admin, { credit: '7.00' });
    const b = await createWorld(admin, { credit: '9.00' });
    for (const [world, balance] of [[a, '7.000000'], [b, '9.000000']] as const) {
      const wallet = await admin.get(`/v1/wallets/${world.walletId}`);
      expect(wallet.status).toBe(200);
      expect(wallet.body).toMatchObject({ id: world.walletId, tenant_id: world.tenantId, currency: 'USD', balance, reserved: '0.000000', available: balance });
      const entries = await admin.get(`/v1/wallets/${world.walletId}/entries`);
      expect(entries.status).toBe(200);
      expect(entries.body.data.map((e: any) => [e.entry_type, e.amount])).toEqual([['credit', balance]]);
    }
    expectError(await admin.get(`/v1/wallets/${randomUUID()}`), 404, 'not_found');
  });
});
