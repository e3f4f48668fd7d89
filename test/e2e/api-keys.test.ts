import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RESPONSE_CHECKED_HEADER } from '../../src/api/response-check.js';
import { freshDatabase } from '../support/database.js';
import { ADMIN_TOKEN, TALLY_BIN, startServer } from '../support/server.js';
import { Client, type Answer } from '../support/client.js';
import { countRows, expectError } from '../support/refusal.js';

/**
 * A tenant's named API keys (docs/CONTRACT.md "API keys") against a real `tally serve`:
 * several keys per tenant, each the tenant's; listed with names and last use, never the
 * key; a revoked key refused from the next request on, on every server, while the
 * others keep working; the admin acting for a tenant; one tenant never reaching another's.
 */

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 0 });
/** A second server on the same database: a revoke through one is seen by the other at once. */
const other = await startServer(db.url, { workers: 0 });
const admin = new Client(server.url);

interface Tenant {
  id: string;
  /** the key POST /v1/tenants made, named "default" */
  key: string;
  client: Client;
  walletId: string;
}

/** A tenant with a wallet: reading that wallet proves a key is this tenant's (another's answers 404). */
async function newTenant(): Promise<Tenant> {
  const tenant = await admin.post('/v1/tenants', { name: `keys-${randomUUID().slice(0, 8)}` });
  expect(tenant.status).toBe(201);
  const client = admin.as(tenant.body.api_key);
  const wallet = await client.post('/v1/wallets', { currency: 'USD' });
  expect(wallet.status).toBe(201);
  return { id: tenant.body.id, key: tenant.body.api_key, client, walletId: wallet.body.id };
}

async function createKey(client: Client, body: Record<string, unknown>, headers?: Record<string, string>) {
  const answer = await client.post('/v1/api-keys', body, headers);
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body as { id: string; tenant_id: string; name: string; api_key: string; created_at: string };
}

async function listKeys(client: Client, query = ''): Promise<any[]> {
  const answer = await client.get(`/v1/api-keys${query}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.body.has_more).toBe(false);
  return answer.body.data;
}

const revoke = (client: Client, id: string, query = '') => client.request('DELETE', `/v1/api-keys/${id}${query}`);

async function lastUsedAt(id: string): Promise<Date | null> {
  const result = await db.pool.query<{ last_used_at: Date | null }>('select last_used_at from api_keys where id = $1', [id]);
  return result.rows[0]!.last_used_at;
}

/** Each answer was checked against its route's schema by the server (TALLY_CHECK_RESPONSES=1). */
function checked(answer: Answer): Answer {
  expect(answer.headers.get(RESPONSE_CHECKED_HEADER), JSON.stringify(answer.body)).toBe(String(answer.status));
  return answer;
}

describe('several named keys', () => {
  it('each authenticates as the tenant; the list shows names and last use, never a key or its hash', async () => {
    const tenant = await newTenant();
    const before = await listKeys(tenant.client);
    expect(before.map((k) => k.name)).toEqual(['default']);

    const production = await createKey(tenant.client, { name: 'production' });
    const ci = await createKey(tenant.client, { name: 'ci' });
    expect(production).toEqual({ id: expect.any(String), tenant_id: tenant.id, name: 'production', api_key: expect.stringMatching(/^tk_/), created_at: expect.any(String) });
    expect(new Set([tenant.key, production.api_key, ci.api_key]).size).toBe(3);

    // Nothing used the new keys yet.
    const fresh = checked(await tenant.client.get('/v1/api-keys'));
    expect(fresh.body.data.map((k: any) => [k.name, k.last_used_at === null])).toEqual([
      ['ci', true],
      ['production', true],
      ['default', false],
    ]);

    for (const key of [tenant.key, production.api_key, ci.api_key]) {
      const wallet = await admin.as(key).get(`/v1/wallets/${tenant.walletId}`);
      expect(wallet.status).toBe(200);
      expect(wallet.body.tenant_id).toBe(tenant.id);
    }

    const listed = checked(await tenant.client.get('/v1/api-keys'));
    expect(listed.body.data).toEqual(
      ['ci', 'production', 'default'].map((name) => ({
        id: expect.any(String),
        tenant_id: tenant.id,
        name,
        created_at: expect.any(String),
        last_used_at: expect.any(String),
        revoked_at: null,
      })),
    );
    expect(listed.body.data[0].id).toBe(ci.id);
    const text = JSON.stringify(listed.body);
    const hashes = await db.pool.query<{ hash: string }>(`select encode(key_hash, 'hex') as hash, encode(key_hash, 'base64') as b64 from api_keys where tenant_id = $1`, [tenant.id]);
    for (const secret of [tenant.key, production.api_key, ci.api_key, ...hashes.rows.flatMap((r) => Object.values(r))]) expect(text).not.toContain(secret);

    // Stored hashed: no column of the rows holds a key.
    const rows = await db.pool.query<{ row: string }>('select row_to_json(k)::text as row from api_keys k where tenant_id = $1', [tenant.id]);
    expect(rows.rows).toHaveLength(3);
    for (const key of [tenant.key, production.api_key, ci.api_key]) {
      for (const { row } of rows.rows) {
        expect(row).not.toContain(key);
        expect(row).not.toContain(Buffer.from(key).toString('hex'));
      }
    }
  });

  it('pages the keys newest first like the other lists', async () => {
    const tenant = await newTenant();
    const made = [];
    for (const name of ['one', 'two', 'three']) made.push(await createKey(tenant.client, { name }));
    const first = checked(await tenant.client.get('/v1/api-keys?limit=2'));
    expect(first.body.data.map((k: any) => k.name)).toEqual(['three', 'two']);
    expect(first.body.has_more).toBe(true);
    const second = await tenant.client.get(`/v1/api-keys?limit=2&starting_after=${first.body.data[1].id}`);
    expect(second.body.data.map((k: any) => k.name)).toEqual(['one', 'default']);
    expect(second.body.has_more).toBe(false);
    expectError(await tenant.client.get('/v1/api-keys?starting_after=nope'), 400, 'invalid_cursor');
    expectError(await tenant.client.get('/v1/api-keys?limit=0'), 400, 'invalid_request');
    expectError(await tenant.client.get('/v1/api-keys?name=one'), 400, 'invalid_request');
  });

  it('keeps last_used_at to the minute: a key used again within the minute writes nothing', async () => {
    const tenant = await newTenant();
    const key = await createKey(tenant.client, { name: 'busy' });
    const busy = admin.as(key.api_key);
    // Values are set in the database, relative to its clock: no test waits a minute.
    await db.pool.query(`update api_keys set last_used_at = now() - interval '10 seconds' where id = $1`, [key.id]);
    const recent = await lastUsedAt(key.id);
    for (let i = 0; i < 5; i++) expect((await busy.get(`/v1/wallets/${tenant.walletId}`)).status).toBe(200);
    expect(await lastUsedAt(key.id)).toEqual(recent);

    await db.pool.query(`update api_keys set last_used_at = now() - interval '2 minutes' where id = $1`, [key.id]);
    const stale = (await lastUsedAt(key.id))!;
    expect((await busy.get(`/v1/wallets/${tenant.walletId}`)).status).toBe(200);
    const touched = (await lastUsedAt(key.id))!;
    expect(touched.getTime()).toBeGreaterThan(stale.getTime());
    const shown = (await listKeys(tenant.client)).find((k) => k.id === key.id);
    expect(shown.last_used_at).toBe(touched.toISOString());

    // Many requests at once in the first use of a minute: all authenticated, one value kept.
    await db.pool.query(`update api_keys set last_used_at = null where id = $1`, [key.id]);
    const answers = await Promise.all(Array.from({ length: 16 }, () => busy.get(`/v1/wallets/${tenant.walletId}`)));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(await lastUsedAt(key.id)).not.toBeNull();
  });

  it('an idempotent replay of a create shows the same key, and makes none', async () => {
    const tenant = await newTenant();
    const idempotencyKey = randomUUID();
    const first = await createKey(tenant.client, { name: 'deploy' }, { 'idempotency-key': idempotencyKey });
    // The replay may come with another of the tenant's keys: the principal is the tenant.
    const replay = checked(await admin.as(first.api_key).post('/v1/api-keys', { name: 'deploy' }, { 'idempotency-key': idempotencyKey }));
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first);
    expect((await listKeys(tenant.client)).map((k) => k.name)).toEqual(['deploy', 'default']);
    expectError(await tenant.client.post('/v1/api-keys', { name: 'other' }, { 'idempotency-key': idempotencyKey }), 422, 'idempotency_key_reused');
    // The replayable answer is sealed: the key is in no table in clear.
    const hits = await db.pool.query<{ n: number }>(`select count(*)::int as n from idempotency_keys t where row_to_json(t)::text like '%' || $1 || '%'`, [first.api_key]);
    expect(hits.rows[0]!.n).toBe(0);
  });

  it('refuses a name that is missing, empty or too long, and an unknown field, storing nothing', async () => {
    const tenant = await newTenant();
    const before = await countRows(db.pool, ['api_keys', 'idempotency_keys']);
    for (const body of [{}, { name: '' }, { name: 'x'.repeat(201) }, { name: 'ok', scopes: ['all'] }]) {
      expectError(checked(await tenant.client.post('/v1/api-keys', body, { 'idempotency-key': randomUUID() })), 400, 'invalid_request');
    }
    expect(await countRows(db.pool, ['api_keys', 'idempotency_keys'])).toEqual(before);
  });
});

describe('revoking', () => {
  it('refuses the revoked key at once while the others keep working; revoking again answers the same', async () => {
    const tenant = await newTenant();
    const production = await createKey(tenant.client, { name: 'production' });
    const leaked = await createKey(tenant.client, { name: 'leaked' });
    const leakedClient = admin.as(leaked.api_key);
    expect((await leakedClient.get(`/v1/wallets/${tenant.walletId}`)).status).toBe(200);

    const revoked = checked(await revoke(admin.as(production.api_key), leaked.id));
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({
      id: leaked.id,
      tenant_id: tenant.id,
      name: 'leaked',
      created_at: leaked.created_at,
      last_used_at: expect.any(String),
      revoked_at: expect.any(String),
    });
    // The very next request, on every route.
    expectError(checked(await leakedClient.get(`/v1/wallets/${tenant.walletId}`)), 401, 'unauthorized');
    expectError(await leakedClient.get('/v1/api-keys'), 401, 'unauthorized');
    expectError(await leakedClient.post('/v1/api-keys', { name: 'sneaky' }), 401, 'unauthorized');
    for (const key of [tenant.key, production.api_key]) expect((await admin.as(key).get(`/v1/wallets/${tenant.walletId}`)).status).toBe(200);

    const again = checked(await revoke(tenant.client, leaked.id));
    expect(again.status).toBe(200);
    expect(again.body).toEqual(revoked.body);
    // Still listed, with when it was revoked.
    expect((await listKeys(tenant.client)).find((k) => k.id === leaked.id)).toEqual(revoked.body);
  });

  it('a key may revoke itself: that request is answered, the next is refused', async () => {
    const tenant = await newTenant();
    const self = await createKey(tenant.client, { name: 'self' });
    const client = admin.as(self.api_key);
    const answer = await revoke(client, self.id);
    expect(answer.status).toBe(200);
    expect(answer.body.revoked_at).not.toBeNull();
    expectError(await client.get(`/v1/wallets/${tenant.walletId}`), 401, 'unauthorized');
  });

  it('requests racing a revoke: any sent after its answer are refused, and once refused never accepted again', async () => {
    const tenant = await newTenant();
    const key = await createKey(tenant.client, { name: 'racing' });
    const client = admin.as(key.api_key);
    let revokeAnswered = false;
    const lane = async () => {
      const seen: { sentAfterRevoke: boolean; status: number }[] = [];
      // Keep requests in flight until a few have been sent after the revoke was answered.
      while (seen.filter((s) => s.sentAfterRevoke).length < 5) {
        const sentAfterRevoke = revokeAnswered;
        const answer = await client.get(`/v1/wallets/${tenant.walletId}`);
        seen.push({ sentAfterRevoke, status: answer.status });
      }
      return seen;
    };
    const lanes = Array.from({ length: 6 }, lane);
    // The first answers show the lanes are under way before the revoke is sent.
    expect((await client.get(`/v1/wallets/${tenant.walletId}`)).status).toBe(200);
    const revoked = await revoke(tenant.client, key.id);
    revokeAnswered = true;
    expect(revoked.status).toBe(200);
    for (const seen of await Promise.all(lanes)) {
      for (const s of seen) expect([200, 401]).toContain(s.status);
      expect(seen.filter((s) => s.sentAfterRevoke).map((s) => s.status)).toEqual(seen.filter((s) => s.sentAfterRevoke).map(() => 401));
      const firstRefused = seen.findIndex((s) => s.status === 401);
      expect(seen.slice(firstRefused).every((s) => s.status === 401)).toBe(true);
    }
  });

  it('no server keeps a revoked key alive: a second server on the database refuses it at once too', async () => {
    const tenant = await newTenant();
    const key = await createKey(tenant.client, { name: 'everywhere' });
    const there = new Client(other.url, key.api_key);
    expect((await there.get(`/v1/wallets/${tenant.walletId}`)).status).toBe(200);
    expect((await revoke(tenant.client, key.id)).status).toBe(200);
    expectError(await there.get(`/v1/wallets/${tenant.walletId}`), 401, 'unauthorized');
    expectError(await admin.as(key.api_key).get(`/v1/wallets/${tenant.walletId}`), 401, 'unauthorized');
  });
});

describe('the admin, for a tenant', () => {
  it('creates, lists and revokes with tenant_id', async () => {
    const a = await newTenant();
    const b = await newTenant();
    const made = checked(await admin.post('/v1/api-keys', { name: 'made by ops', tenant_id: a.id.toUpperCase() }));
    expect(made.status).toBe(201);
    expect(made.body.tenant_id).toBe(a.id);
    const wallet = await admin.as(made.body.api_key).get(`/v1/wallets/${a.walletId}`);
    expect(wallet.status).toBe(200);

    expect((await listKeys(admin, `?tenant_id=${a.id}`)).map((k) => k.name)).toEqual(['made by ops', 'default']);
    expect((await listKeys(admin, `?tenant_id=${b.id}`)).map((k) => k.name)).toEqual(['default']);
    // Without tenant_id the admin sees everyone's.
    const all = (await admin.get('/v1/api-keys?limit=100')).body.data.map((k: any) => k.tenant_id);
    expect(all).toEqual(expect.arrayContaining([a.id, b.id]));

    // Revoking names the key; a tenant_id that is not its tenant's finds nothing.
    expectError(checked(await revoke(admin, made.body.id, `?tenant_id=${b.id}`)), 404, 'not_found');
    expect((await revoke(admin, made.body.id, `?tenant_id=${a.id}`)).status).toBe(200);
    expectError(await admin.as(made.body.api_key).get(`/v1/wallets/${a.walletId}`), 401, 'unauthorized');
    const bDefault = (await listKeys(admin, `?tenant_id=${b.id}`))[0];
    expect((await revoke(admin, bDefault.id)).status).toBe(200);
    expectError(await b.client.get(`/v1/wallets/${b.walletId}`), 401, 'unauthorized');
  });

  it('must name the tenant to create a key, and an existing one', async () => {
    const before = await countRows(db.pool, ['api_keys']);
    const missing = checked(await admin.post('/v1/api-keys', { name: 'whose?' }));
    expectError(missing, 400, 'invalid_request');
    expect(missing.body.error.param).toBe('tenant_id');
    expectError(checked(await admin.post('/v1/api-keys', { name: 'nobody', tenant_id: randomUUID() })), 404, 'not_found');
    expectError(await admin.post('/v1/api-keys', { name: 'bad', tenant_id: 'not-a-uuid' }), 400, 'invalid_request');
    expect(await countRows(db.pool, ['api_keys'])).toEqual(before);
  });
});

describe('tenant isolation', () => {
  it("a tenant can neither see, make nor revoke another tenant's keys", async () => {
    const a = await newTenant();
    const b = await newTenant();
    const bKey = await createKey(b.client, { name: 'b only' });
    const before = await countRows(db.pool, ['api_keys']);

    expect((await listKeys(a.client)).every((k) => k.tenant_id === a.id)).toBe(true);
    expect((await listKeys(a.client, `?tenant_id=${a.id}`)).map((k) => k.name)).toEqual(['default']);
    // Naming another tenant is 403, as in the other list APIs (an unknown one alike).
    for (const other of [b.id, randomUUID()]) {
      expectError(checked(await a.client.get(`/v1/api-keys?tenant_id=${other}`)), 403, 'forbidden');
      expectError(checked(await a.client.post('/v1/api-keys', { name: 'into b', tenant_id: other })), 403, 'forbidden');
      expectError(checked(await revoke(a.client, bKey.id, `?tenant_id=${other}`)), 403, 'forbidden');
    }
    // Another tenant's key answers exactly like one that does not exist.
    for (const id of [bKey.id, randomUUID(), 'not-a-uuid', `${bKey.id}0`]) expectError(checked(await revoke(a.client, id)), 404, 'not_found');
    expect(await countRows(db.pool, ['api_keys'])).toEqual(before);
    expect((await admin.as(bKey.api_key).get(`/v1/wallets/${b.walletId}`)).status).toBe(200);
    // A's keys read nothing of B's.
    expect((await a.client.get(`/v1/wallets/${b.walletId}`)).status).toBe(404);
  });

  it('refuses no or a wrong credential with 401', async () => {
    for (const client of [admin.as(null), admin.as('tk_not-a-key')]) {
      expectError(await client.get('/v1/api-keys'), 401, 'unauthorized');
      expectError(await client.post('/v1/api-keys', { name: 'x' }), 401, 'unauthorized');
      expectError(await revoke(client, randomUUID()), 401, 'unauthorized');
    }
  });
});

describe('tally api-keys', () => {
  async function tally(args: string[], env: Record<string, string | undefined> = {}) {
    const child = spawn(process.execPath, [TALLY_BIN, ...args], {
      env: { ...process.env, DATABASE_URL: undefined, TALLY_API_KEY: undefined, TALLY_URL: server.url, TALLY_ADMIN_TOKEN: ADMIN_TOKEN, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    return { code, stdout: stdout.trim(), stderr };
  }

  it('creates, lists and revokes over the API, as the tenant or as the admin with --tenant', async () => {
    const tenant = await newTenant();
    const asTenant = { TALLY_API_KEY: tenant.key };
    const created = await tally(['api-keys', 'create', 'from the cli'], asTenant);
    expect(created.code, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout);
    expect(key).toMatchObject({ name: 'from the cli', tenant_id: tenant.id, api_key: expect.stringMatching(/^tk_/) });

    const byAdmin = await tally(['api-keys', 'create', 'ops', '--tenant', tenant.id, '--field', 'api_key']);
    expect(byAdmin.code, byAdmin.stderr).toBe(0);
    expect((await admin.as(byAdmin.stdout).get(`/v1/wallets/${tenant.walletId}`)).status).toBe(200);

    const listed = await tally(['api-keys', 'list'], asTenant);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).data.map((k: any) => k.name)).toEqual(['ops', 'from the cli', 'default']);
    expect(listed.stdout).not.toContain(key.api_key);
    const adminList = await tally(['api-keys', 'list', '--tenant', tenant.id, '--limit', '1', '--field', 'data.0.name']);
    expect(adminList.stdout).toBe('ops');

    const revoked = await tally(['api-keys', 'revoke', key.id, '--field', 'revoked_at'], asTenant);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expectError(await admin.as(key.api_key).get(`/v1/wallets/${tenant.walletId}`), 401, 'unauthorized');

    const unknown = await tally(['api-keys', 'revoke', randomUUID()], asTenant);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/404 not_found/);
    const noKey = await tally(['api-keys', 'list']);
    expect(noKey.code).toBe(2);
  });
});
