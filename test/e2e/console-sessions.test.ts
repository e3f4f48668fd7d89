import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { IN_PROCESS_HEADER } from '../../src/principal.js';
import { FAILED_SIGN_INS_PER_MINUTE } from '../../src/console/sign-in-limit.js';
import { freshDatabase } from '../support/database.js';
import { ADMIN_TOKEN } from '../support/server.js';

/**
 * Issue 24, item 1: console sessions on real PostgreSQL, through the real app (buildApp,
 * app.inject). The cookie is a random id whose hash is stored with its principal; it ends
 * at sign-out, at its idle and absolute expiries (moved by updating the row: the checks
 * compare with the database's clock), when its API key is revoked or the admin token
 * changes; every console POST needs a same-origin browser; sign-in is rate limited.
 */
const db = await freshDatabase();
const serverSecret = randomBytes(32);
/** An app on the test's database; the admin token is the one it is configured with. */
const appWith = (adminToken: string) =>
  buildApp({ pool: db.pool, logLevel: 'silent', serverSecret, checkResponses: true, settings: { adminToken } });
let app: FastifyInstance;
let tenant: { id: string; api_key: string };

const HOST = 'console.test';
/** What a browser sends with a form posted from a console page. */
const FROM_CONSOLE = { host: HOST, origin: `http://${HOST}`, 'sec-fetch-site': 'same-origin' };
let nextAddress = 1;

beforeAll(async () => {
  app = await appWith(ADMIN_TOKEN);
  const made = await app.inject({
    method: 'POST',
    url: '/v1/tenants',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    payload: { name: 'acme' },
  });
  expect(made.statusCode).toBe(201);
  tenant = made.json();
});
afterAll(() => app?.close());

/** Signs in from its own client address (the sign-in limit is per address); returns the Set-Cookie and the session id. */
async function signIn(credential: string, headers: Record<string, string> = {}) {
  const answer = await app.inject({
    method: 'POST',
    url: '/console/sign-in',
    remoteAddress: `10.0.0.${nextAddress++}`,
    headers: { ...FROM_CONSOLE, ...headers },
    payload: { token: credential },
  });
  expect(answer.statusCode).toBe(303);
  expect(answer.headers.location).toBe('/console');
  const setCookie = String(answer.headers['set-cookie']);
  const id = /^tally_console=([^;]+)/.exec(setCookie)![1]!;
  return { setCookie, id, cookie: `tally_console=${id}` };
}

async function open(cookie: string, url = '/console/wallets') {
  return app.inject({ method: 'GET', url, headers: { host: HOST, cookie } });
}

async function sessionRows() {
  return (await db.pool.query('select * from console_sessions order by created_at')).rows;
}

/** The stored id_hash of a session id. */
const hashOf = (id: string) => createHash('sha256').update(id).digest();

describe('console sessions', () => {
  it('keep a random id in the cookie, never the credential, and store only its hash with the principal', async () => {
    for (const credential of [ADMIN_TOKEN, tenant.api_key]) {
      const { setCookie, id, cookie } = await signIn(credential);
      expect(setCookie).toMatch(/; Path=\/console; Max-Age=43200; HttpOnly; SameSite=Strict$/);
      expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
      for (const form of [credential, Buffer.from(credential).toString('base64'), Buffer.from(credential).toString('base64url')]) {
        expect(setCookie).not.toContain(form);
      }
      expect((await open(cookie)).statusCode).toBe(200);
    }
    const rows = await sessionRows();
    expect(rows.map((r) => r.principal)).toEqual(['admin', 'tenant']);
    const stored = JSON.stringify(rows.map((r) => Object.values(r).map((v) => (Buffer.isBuffer(v) ? v.toString('hex') : String(v)))));
    for (const secret of [ADMIN_TOKEN, tenant.api_key]) {
      expect(stored).not.toContain(secret);
      expect(stored).not.toContain(Buffer.from(secret).toString('hex'));
    }
    expect(rows[1]).toMatchObject({ tenant_id: tenant.id, admin_fingerprint: null });
    expect(rows[0].admin_fingerprint).toHaveLength(32);
    // Absolute expiry 12 hours after sign-in, idle expiry 30 minutes, by the database's clock.
    const spans = await db.pool.query(
      `select extract(epoch from expires_at - created_at)::int as absolute, extract(epoch from idle_expires_at - last_seen_at)::int as idle from console_sessions`,
    );
    expect(spans.rows).toEqual([
      { absolute: 43200, idle: 1800 },
      { absolute: 43200, idle: 1800 },
    ]);
  });

  it('marks the cookie Secure over HTTPS, including behind a TLS proxy that says X-Forwarded-Proto: https', async () => {
    expect((await signIn(ADMIN_TOKEN, { 'x-forwarded-proto': 'https' })).setCookie).toMatch(/; Secure$/);
    expect((await signIn(ADMIN_TOKEN, { 'x-forwarded-proto': 'https, http' })).setCookie).toMatch(/; Secure$/);
    expect((await signIn(ADMIN_TOKEN)).setCookie).not.toContain('Secure');
  });

  it('end at sign-out: the old cookie opens nothing', async () => {
    const { id, cookie } = await signIn(ADMIN_TOKEN);
    const out = await app.inject({ method: 'POST', url: '/console/sign-out', headers: { ...FROM_CONSOLE, cookie }, payload: {} });
    expect(out.statusCode).toBe(303);
    expect(out.headers.location).toBe('/console/sign-in');
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
    expect((await db.pool.query('select 1 from console_sessions where id_hash = $1', [hashOf(id)])).rowCount).toBe(0);
    const again = await open(cookie);
    expect(again.statusCode).toBe(303);
    expect(again.headers.location).toBe('/console/sign-in');
  });

  it('end when unused past the idle expiry, and each use moves that expiry, never past the absolute one', async () => {
    const { id, cookie } = await signIn(tenant.api_key);
    await db.pool.query(`update console_sessions set idle_expires_at = now() + interval '1 minute' where id_hash = $1`, [hashOf(id)]);
    expect((await open(cookie)).statusCode).toBe(200);
    const slid = await db.pool.query(
      `select extract(epoch from idle_expires_at - now())::int as left from console_sessions where id_hash = $1`,
      [hashOf(id)],
    );
    expect(slid.rows[0].left).toBeGreaterThan(1700);
    // Near its absolute end, a use moves the idle expiry only up to it.
    await db.pool.query(`update console_sessions set expires_at = now() + interval '5 minutes' where id_hash = $1`, [hashOf(id)]);
    expect((await open(cookie)).statusCode).toBe(200);
    const capped = await db.pool.query(`select idle_expires_at = expires_at as capped from console_sessions where id_hash = $1`, [
      hashOf(id),
    ]);
    expect(capped.rows[0].capped).toBe(true);

    await db.pool.query(`update console_sessions set idle_expires_at = now() - interval '1 second' where id_hash = $1`, [hashOf(id)]);
    const idle = await open(cookie);
    expect(idle.statusCode).toBe(303);
    expect(idle.headers.location).toBe('/console/sign-in');
    // Found dead, deleted.
    expect((await db.pool.query('select 1 from console_sessions where id_hash = $1', [hashOf(id)])).rowCount).toBe(0);
  });

  it('end at the absolute expiry, however recently used', async () => {
    const { id, cookie } = await signIn(ADMIN_TOKEN);
    await db.pool.query(
      `update console_sessions set created_at = now() - interval '12 hours 1 second', expires_at = now() - interval '1 second' where id_hash = $1`,
      [hashOf(id)],
    );
    const answer = await open(cookie);
    expect(answer.statusCode).toBe(303);
    expect(answer.headers.location).toBe('/console/sign-in');
  });

  it('are swept when expired, at the next sign-in', async () => {
    await db.pool.query(`update console_sessions set idle_expires_at = now() - interval '1 second'`);
    await signIn(ADMIN_TOKEN);
    expect((await sessionRows()).length).toBe(1);
  });

  it('end when the API key they signed in with is revoked', async () => {
    const made = await app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { name: 'console', tenant_id: tenant.id },
    });
    expect(made.statusCode).toBe(201);
    const key = made.json();
    const { cookie } = await signIn(key.api_key);
    const other = await signIn(tenant.api_key);
    expect((await open(cookie)).statusCode).toBe(200);
    const revoked = await app.inject({
      method: 'DELETE',
      url: `/v1/api-keys/${key.id}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(revoked.statusCode).toBe(200);
    const answer = await open(cookie);
    expect(answer.statusCode).toBe(303);
    expect(answer.headers.location).toBe('/console/sign-in');
    // The tenant's session on another key lives on.
    expect((await open(other.cookie)).statusCode).toBe(200);
  });

  it('end, for the admin, when TALLY_ADMIN_TOKEN changes', async () => {
    const { cookie } = await signIn(ADMIN_TOKEN);
    expect((await open(cookie, '/console/tenants')).statusCode).toBe(200);
    // The server restarted with another admin token, same database and server secret.
    const restarted = await appWith('a-new-admin-token');
    try {
      const answer = await restarted.inject({ method: 'GET', url: '/console/tenants', headers: { host: HOST, cookie } });
      expect(answer.statusCode).toBe(303);
      expect(answer.headers.location).toBe('/console/sign-in');
    } finally {
      await restarted.close();
    }
    // Going back to the old token does not revive the session: it was deleted when found dead.
    expect((await open(cookie, '/console/tenants')).headers.location).toBe('/console/sign-in');
  });
});

describe('console POSTs from elsewhere', () => {
  const elsewhere: [string, Record<string, string>][] = [
    ['neither Origin nor Sec-Fetch-Site', { host: HOST }],
    ["another site's Origin", { host: HOST, origin: 'https://evil.example' }],
    ['Sec-Fetch-Site: cross-site', { host: HOST, origin: `http://${HOST}`, 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site', { host: HOST, 'sec-fetch-site': 'same-site' }],
  ];

  it.each(elsewhere)('are refused with a 403 page: sign-in, sign-out and actions (%s)', async (_name, headers) => {
    const { id, cookie } = await signIn(ADMIN_TOKEN);
    const before = (await sessionRows()).length;
    for (const [url, payload] of [
      ['/console/sign-in', { token: ADMIN_TOKEN }],
      ['/console/sign-out', {}],
      ['/console/repair', {}],
      ['/console/exceptions/00000000-0000-7000-8000-000000000000/resolve', { note: 'x' }],
    ] as const) {
      const answer = await app.inject({ method: 'POST', url, remoteAddress: '10.9.9.9', headers: { ...headers, cookie }, payload });
      expect(answer.statusCode, url).toBe(403);
      expect(answer.headers['content-type']).toContain('text/html');
      expect(answer.body).toContain('did not come from a console page');
      expect(answer.headers['set-cookie'], url).toBeUndefined();
    }
    // No session was made, the signed-in one was not ended, no repair ran.
    expect((await sessionRows()).length).toBe(before);
    expect((await db.pool.query('select 1 from console_sessions where id_hash = $1', [hashOf(id)])).rowCount).toBe(1);
    expect((await db.pool.query('select 1 from reconciliation_runs')).rowCount).toBe(0);
  });

  it('are taken with a matching Origin alone (a browser that sends no fetch metadata)', async () => {
    const answer = await app.inject({
      method: 'POST',
      url: '/console/sign-in',
      remoteAddress: '10.8.8.8',
      headers: { host: HOST, origin: `http://${HOST}` },
      payload: { token: ADMIN_TOKEN },
    });
    expect(answer.statusCode).toBe(303);
    expect(answer.headers.location).toBe('/console');
  });
});

describe('console sign-in', () => {
  it(`is limited to ${FAILED_SIGN_INS_PER_MINUTE} failed attempts a minute per client address, with a page saying so`, async () => {
    const attempt = (remoteAddress: string, token: string) =>
      app.inject({ method: 'POST', url: '/console/sign-in', remoteAddress, headers: FROM_CONSOLE, payload: { token } });
    // Successful sign-ins never count: an operator (or a test suite) signing in often is not locked out.
    for (let i = 0; i < FAILED_SIGN_INS_PER_MINUTE + 5; i++) {
      expect((await attempt('10.7.7.7', ADMIN_TOKEN)).headers.location).toBe('/console');
    }
    for (let i = 0; i < FAILED_SIGN_INS_PER_MINUTE; i++) {
      const answer = await attempt('10.7.7.7', `wrong-${i}`);
      expect(answer.headers.location).toBe('/console/sign-in?failed');
    }
    // Past the limit even the right token is refused, before it is looked at.
    const limited = await attempt('10.7.7.7', ADMIN_TOKEN);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['content-type']).toContain('text/html');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.body).toContain('Too many failed sign-ins from your address');
    expect(limited.headers['set-cookie']).toBeUndefined();
    // Another address is not held back by this one.
    expect((await attempt('10.7.7.8', ADMIN_TOKEN)).headers.location).toBe('/console');
  });
});

describe("the console's in-process principal", () => {
  it('cannot be claimed from outside: a real request sending the ticket header is refused, whatever it holds', async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const answer = await fetch(`http://127.0.0.1:${port}/v1/tenants`, {
      headers: { [IN_PROCESS_HEADER]: 'admin', authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(answer.status).toBe(401);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    // In process, a ticket no console call issued is refused too.
    const forged = await app.inject({
      method: 'GET',
      url: '/v1/tenants',
      headers: { [IN_PROCESS_HEADER]: randomBytes(32).toString('base64url') },
    });
    expect(forged.statusCode).toBe(401);
  });
});
