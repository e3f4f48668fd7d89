import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { uncachedProviders } from '../../src/catalog/provider-cache.js';
import { sealSecretsAtStart } from '../../src/cli/seal-at-start.js';
import { SecretUnsealable } from '../../src/sealed-secrets.js';
import { Client, TEST_SECRET, deliver, signDelivery } from '../support/client.js';
import { freshDatabase } from '../support/database.js';
import { ADMIN_TOKEN } from '../support/server.js';
import { completion, createWorld, submitJob, type World } from '../support/world.js';

/**
 * Issue 33, item 9, providers' side: the Standard Webhooks secrets of `providers` are
 * stored sealed under the server's secret, so a dump of the table is not enough to sign a
 * delivery. One stored in the clear (before migration 0027, or by SQL) keeps verifying
 * and is sealed at the start of serve / worker; rotation (several secrets) works across
 * both forms; under another server secret nothing opens.
 */
const db = await freshDatabase();
const serverSecret = randomBytes(32);
const app = await buildApp({ pool: db.pool, logLevel: 'silent', serverSecret, checkResponses: true, settings: { adminToken: ADMIN_TOKEN } });
await app.listen({ port: 0, host: '127.0.0.1' });
afterAll(() => app.close());
const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
const admin = new Client(url);
const quiet = { info: () => {}, warn: () => {} };

const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;
const stored = async (provider: string) =>
  (await db.pool.query<{ secrets: string[] }>('select secrets from providers where name = $1', [provider])).rows[0]!.secrets;

/** A new job's completion, signed with `secret`, delivered: its status and code. */
async function deliverSigned(world: World, secret: string): Promise<[number, string | undefined]> {
  const job = await submitJob(world);
  const answer = await deliver(url, world.provider, signDelivery(completion(world, job.id, { input_tokens: 1 }), { secret }));
  return [answer.status, answer.body?.error?.code ?? answer.body?.status];
}

describe("providers' webhook secrets at rest", () => {
  it('stores every secret sealed (no trace of it in the row) and verifies with it', async () => {
    const world = await createWorld(admin); // its provider made by POST /v1/providers with TEST_SECRET
    const [secret] = await stored(world.provider);
    expect(secret!.startsWith('sealed:v1:')).toBe(true);
    const row = await db.pool.query(`select row_to_json(p)::text as row from providers p where name = $1`, [world.provider]);
    expect(row.rows[0].row).not.toContain(TEST_SECRET.slice('whsec_'.length));
    expect(await deliverSigned(world, TEST_SECRET)).toEqual([200, 'accepted']);
    expect(await deliverSigned(world, newSecret())).toEqual([401, 'invalid_signature']);
  });

  it('keeps verifying a secret stored in the clear, and seals it at start: it verifies the same after', async () => {
    const world = await createWorld(admin);
    const legacy = newSecret();
    await db.pool.query('update providers set secrets = $2 where name = $1', [world.provider, [legacy]]); // as written before 0027
    expect(await deliverSigned(world, legacy)).toEqual([200, 'accepted']);
    expect(await stored(world.provider)).toEqual([legacy]); // reading never writes

    await sealSecretsAtStart(db.pool, serverSecret, quiet);
    const [sealed] = await stored(world.provider);
    expect(sealed!.startsWith('sealed:v1:')).toBe(true);
    expect(sealed).not.toContain(legacy.slice('whsec_'.length));
    expect(await deliverSigned(world, legacy)).toEqual([200, 'accepted']);
    await sealSecretsAtStart(db.pool, serverSecret, quiet);
    expect(await stored(world.provider)).toEqual([sealed]);
  });

  it('rotates across both forms: [new, old-in-the-clear] both verify and end sealed, then dropping the old refuses it', async () => {
    const world = await createWorld(admin);
    const old = newSecret();
    const next = newSecret();
    await db.pool.query('update providers set secrets = $2 where name = $1', [world.provider, [old]]);
    const rotated = await admin.request('PATCH', `/v1/providers/${world.provider}`, { secrets: [next, old] });
    expect([rotated.status, rotated.body.secrets_count]).toEqual([200, 2]);
    const secrets = await stored(world.provider);
    expect(secrets.every((s) => s.startsWith('sealed:v1:'))).toBe(true);
    expect(await deliverSigned(world, old)).toEqual([200, 'accepted']);
    expect(await deliverSigned(world, next)).toEqual([200, 'accepted']);
    // A PATCH of policies only keeps the secrets (compared opened, sealed again).
    expect((await admin.request('PATCH', `/v1/providers/${world.provider}`, { policies: { cancel_grace_seconds: 60 } })).status).toBe(200);
    expect(await deliverSigned(world, old)).toEqual([200, 'accepted']);
    expect((await admin.request('PATCH', `/v1/providers/${world.provider}`, { secrets: [next] })).status).toBe(200);
    expect(await deliverSigned(world, old)).toEqual([401, 'invalid_signature']);
    expect(await deliverSigned(world, next)).toEqual([200, 'accepted']);
  });

  it('opens nothing under another server secret, and a process with one seals nothing', async () => {
    const world = await createWorld(admin);
    await expect(uncachedProviders(db.pool, randomBytes(32)).find(world.provider)).rejects.toBeInstanceOf(SecretUnsealable);
    const clear = await createWorld(admin);
    const legacy = newSecret();
    await db.pool.query('update providers set secrets = $2 where name = $1', [clear.provider, [legacy]]);
    await sealSecretsAtStart(db.pool, randomBytes(32), quiet);
    expect(await stored(clear.provider)).toEqual([legacy]);
    expect(await deliverSigned(clear, legacy)).toEqual([200, 'accepted']);
  });
});
