import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Client, deliver } from '../support/client.js';
import { freshDatabase } from '../support/database.js';
import { countRows, expectError } from '../support/refusal.js';
import { startServer, waitUntil } from '../support/server.js';

/**
 * The fal `user_id` setting over HTTP: stored and shown (it is not secret), optional
 * (with a warning), and checked against X-Fal-Webhook-User-Id after the signature.
 * A delivery that passes the checks reaches the job lookup: 404 unknown_job here, as no
 * job exists, which proves it was authenticated; a refused one is 401 and stores nothing.
 */
const db = await freshDatabase();
const server = await startServer(db.url, { workers: 0 });
const admin = new Client(server.url);
const sample = readFileSync(new URL('../fixtures/providers/fal-webhook-completed.json', import.meta.url), 'utf8');
const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const jwks = { keys: [publicKey.export({ format: 'jwk' })] };
const fresh = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

function sendAs(provider: string, userId: string) {
  const requestId = randomUUID();
  const raw = sample.replaceAll('123e4567-e89b-12d3-a456-426614174000', requestId);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const digest = createHash('sha256').update(raw).digest('hex');
  const signature = sign(null, Buffer.from(`${requestId}\n${userId}\n${timestamp}\n${digest}`), privateKey).toString('hex');
  return deliver(server.url, provider, {
    body: raw,
    headers: {
      'content-type': 'application/json',
      'x-fal-webhook-request-id': requestId,
      'x-fal-webhook-user-id': userId,
      'x-fal-webhook-timestamp': timestamp,
      'x-fal-webhook-signature': signature,
    },
  });
}

const intake = () => countRows(db.pool, ['webhook_events', 'delivery_attempts'] as const);

describe('fal user_id', () => {
  it('is stored and shown; a webhook signed for another fal user is 401 invalid_signature and stores nothing', async () => {
    const provider = fresh('fal');
    const created = await admin.post('/v1/providers', { name: provider, kind: 'fal', jwks, api_key: 'k', user_id: 'user_operator' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.user_id).toBe('user_operator');

    const before = await intake();
    expectError(await sendAs(provider, 'user_someone_else'), 401, 'invalid_signature');
    expect(await intake()).toEqual(before);
    expectError(await sendAs(provider, 'user_operator'), 404, 'unknown_job');
  });

  it('follows a PATCH: the new user is taken, the old one refused; null lifts the check', async () => {
    const provider = fresh('fal');
    expect((await admin.post('/v1/providers', { name: provider, kind: 'fal', jwks, api_key: 'k', user_id: 'user_old' })).status).toBe(201);
    const patched = await admin.request('PATCH', `/v1/providers/${provider}`, { user_id: 'user_new' });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.user_id).toBe('user_new');
    expectError(await sendAs(provider, 'user_old'), 401, 'invalid_signature');
    expectError(await sendAs(provider, 'user_new'), 404, 'unknown_job');
    const lifted = await admin.request('PATCH', `/v1/providers/${provider}`, { user_id: null });
    expect(lifted.body.user_id).toBeNull();
    expectError(await sendAs(provider, 'user_old'), 404, 'unknown_job');
  });

  it('stays optional: a fal provider without it is created (and the server warns), and takes any fal user', async () => {
    const provider = fresh('fal');
    const created = await admin.post('/v1/providers', { name: provider, kind: 'fal', jwks, api_key: 'k' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.user_id).toBeNull();
    await waitUntil(() => server.output().includes(provider) && /user_id/.test(server.output()));
    expectError(await sendAs(provider, 'anyone'), 404, 'unknown_job');
  });

  it('is refused where it means nothing or is malformed', async () => {
    const secrets = ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'];
    expectError(await admin.post('/v1/providers', { name: fresh('gen'), kind: 'generic', secrets, user_id: 'user_x' }), 400, 'invalid_request');
    for (const bad of ['', ' user_x', 'user x', 'u'.repeat(201)]) {
      expectError(await admin.post('/v1/providers', { name: fresh('fal'), kind: 'fal', jwks, api_key: 'k', user_id: bad }), 400, 'invalid_request');
    }
  });
});
