import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import { sendStripeEvent, stripeEvent } from '../../src/simulator/stripe/index.js';
import { Client, TEST_SECRET, deliver, signDelivery } from '../support/client.js';
import { freshDatabase } from '../support/database.js';
import { startServer, type TallyServer } from '../support/server.js';
import { completion, createWorld, submitJob, type World } from '../support/world.js';

/**
 * Issue 33, item 9, with real `tally serve` processes: webhook signing secrets written in
 * the clear (as every row before migration 0027) keep verifying, and the next start of a
 * server holding the servers' secret seals them — providers' and Stripe's — after which
 * they verify the same. A server started with another secret seals nothing, and says why.
 */
const SECRET_KEY = randomBytes(32).toString('hex');
const STRIPE_SECRET = 'whsec_c2VhbGVkLWF0LXN0YXJ0LXN0cmlwZQ==';
const db = await freshDatabase();

async function server(secretKey = SECRET_KEY): Promise<TallyServer> {
  const started = await startServer(db.url, { workers: 0, env: { TALLY_SECRET_KEY: secretKey } });
  onTestFinished(() => started.stop('SIGKILL').then(() => undefined));
  return started;
}

const providerSecrets = async (name: string) =>
  (await db.pool.query<{ secrets: string[] }>('select secrets from providers where name = $1', [name])).rows[0]!.secrets;
const stripeSecrets = async () =>
  (await db.pool.query<{ webhook_secrets: string[] }>(`select webhook_secrets from payment_settings`)).rows[0]!.webhook_secrets;

async function completes(url: string, world: World, secret: string): Promise<number> {
  const job = await submitJob(world);
  return (await deliver(url, world.provider, signDelivery(completion(world, job.id, { input_tokens: 1 }), { secret }))).status;
}

async function stripeAccepts(url: string): Promise<number> {
  const event = stripeEvent('customer.created', { id: `cus_${randomUUID()}`, object: 'customer' }, `evt_${randomUUID()}`);
  return (await sendStripeEvent(url, event, STRIPE_SECRET)).status;
}

describe('webhook secrets stored in the clear', () => {
  it('verify as they are, are sealed at the next start, and verify the same after', async () => {
    const first = await server();
    const admin = new Client(first.url);
    const world = await createWorld(admin);
    const put = await admin.request('PUT', '/v1/payment-settings/stripe', { api_key: 'sk_test_sealed_at_start_0000', webhook_secrets: [STRIPE_SECRET] });
    expect(put.status).toBe(200);
    // What a database written before 0027 holds: the secrets as they are (the provider's a
    // new one: intake reads the table again before refusing a signature its cache does not know).
    const legacy = `whsec_${randomBytes(24).toString('base64')}`;
    await db.pool.query('update providers set secrets = $2 where name = $1', [world.provider, [legacy]]);
    await db.pool.query('update payment_settings set webhook_secrets = $1', [[STRIPE_SECRET]]);
    expect(await completes(first.url, world, legacy)).toBe(200);
    expect(await stripeAccepts(first.url)).toBe(200);

    const second = await server();
    const [provider] = await providerSecrets(world.provider);
    const [stripe] = await stripeSecrets();
    for (const value of [provider!, stripe!]) expect(value.startsWith('sealed:v1:')).toBe(true);
    expect(provider).not.toContain(legacy.slice('whsec_'.length));
    expect(stripe).not.toContain(STRIPE_SECRET.slice('whsec_'.length));
    expect(await completes(second.url, world, legacy)).toBe(200);
    expect(await stripeAccepts(second.url)).toBe(200);
    expect(await completes(first.url, world, legacy)).toBe(200);
    expect(await completes(second.url, world, TEST_SECRET)).toBe(401);
  });

  it('are not sealed by a server started with another secret, which says so', async () => {
    const admin = new Client((await server()).url);
    await createWorld(admin); // a provider sealed under the servers' secret
    const world = await createWorld(admin);
    await db.pool.query('update providers set secrets = $2 where name = $1', [world.provider, [TEST_SECRET]]);
    const stranger = await server(randomBytes(32).toString('hex'));
    expect(await providerSecrets(world.provider)).toEqual([TEST_SECRET]);
    expect(stranger.output()).toMatch(/sealed with another server secret: nothing more is sealed/);
  });
});
