import { createDecipheriv, createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { startServer } from '../support/server.js';
import { Client } from '../support/client.js';
import { expectError } from '../support/refusal.js';

/**
 * A new tenant's api_key exists in clear only in its create answer and that answer's
 * idempotent replay. The stored replay is sealed under a server-side secret that never
 * enters the database: a dump plus a guessed Idempotency-Key reveals nothing.
 */

const db = await freshDatabase();
const dataDir = await mkdtemp(join(tmpdir(), 'tally-secret-'));
const server = await startServer(db.url, { workers: 0, env: { TALLY_DATA_DIR: dataDir } });
const admin = new Client(server.url);

/** What someone holding only a database dump and the (guessable) key would try. */
function openWithKeyAlone(stored: { sealed: string }, path: string, rawKey: string): string | null {
  const key = createHash('sha256').update(JSON.stringify(['tally-idempotency-v1', 'admin', 'POST', path, rawKey])).digest();
  const packed = Buffer.from(stored.sealed, 'base64');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, packed.subarray(0, 12));
    decipher.setAuthTag(packed.subarray(12, 28));
    return Buffer.concat([decipher.update(packed.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

describe('secrets at rest', () => {
  it('seals the stored replay of POST /v1/tenants with a server secret: a dump and the Idempotency-Key do not reveal the api_key', async () => {
    const idempotencyKey = 'tenant-1'; // a guessable key, as clients choose them
    const created = await admin.post('/v1/tenants', { name: 'acme' }, { 'idempotency-key': idempotencyKey });
    expect(created.status).toBe(201);
    const apiKey: string = created.body.api_key;

    const dump = await db.pool.query<{ path: string; response_body: { sealed: string } }>(
      `select path, response_body from idempotency_keys where key = encode(sha256(convert_to($1, 'UTF8')), 'hex')`,
      [idempotencyKey],
    );
    expect(dump.rows).toHaveLength(1);
    const row = dump.rows[0]!;
    expect(JSON.stringify(row)).not.toContain(apiKey);
    expect(openWithKeyAlone(row.response_body, row.path, idempotencyKey)).toBeNull();

    // The server itself replays it, and the secret lives beside the data, private.
    const replay = await admin.post('/v1/tenants', { name: 'acme' }, { 'idempotency-key': idempotencyKey });
    expect([replay.status, replay.body.api_key, replay.headers.get('idempotent-replayed')]).toEqual([201, apiKey, 'true']);
    const file = await stat(join(dataDir, 'secret-key'));
    expect(file.mode & 0o777).toBe(0o600);
  });

  it('shares the secret between servers of one data folder, and refuses (409) rather than repeats a call sealed under another secret', async () => {
    const key = randomUUID();
    const created = await admin.post('/v1/tenants', { name: 'globex' }, { 'idempotency-key': key });
    expect(created.status).toBe(201);

    // Servers started inside a test are stopped with it (startServer's afterAll is the file's).
    const sibling = await startServer(db.url, { workers: 0, env: { TALLY_DATA_DIR: dataDir } });
    onTestFinished(() => sibling.stop('SIGKILL').then(() => undefined));
    const replay = await new Client(sibling.url).post('/v1/tenants', { name: 'globex' }, { 'idempotency-key': key });
    expect([replay.status, replay.body]).toEqual([201, created.body]);

    const stranger = await startServer(db.url, { workers: 0, env: { TALLY_SECRET_KEY: randomBytes(32).toString('hex') } });
    onTestFinished(() => stranger.stop('SIGKILL').then(() => undefined));
    const refused = await new Client(stranger.url).post('/v1/tenants', { name: 'globex' }, { 'idempotency-key': key });
    expectError(refused, 409, 'idempotency_replay_unavailable');
    const tenants = await db.pool.query(`select count(*)::int as n from tenants where name = 'globex'`);
    expect(tenants.rows[0].n).toBe(1);
  });

  it('refuses to start with a malformed TALLY_SECRET_KEY, saying how to make one', async () => {
    await expect(startServer(db.url, { workers: 0, env: { TALLY_SECRET_KEY: 'too-short' } })).rejects.toThrow(/TALLY_SECRET_KEY.*openssl rand -hex 32/s);
  });
});
