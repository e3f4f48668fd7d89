import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { Client, deliver, signDelivery } from '../support/client.js';
import { freshDatabase } from '../support/database.js';
import { refuseCapturesOnDemand } from '../support/refused-captures.js';
import { startServer, waitUntil } from '../support/server.js';
import { WebhookReceiver, type Received } from '../support/webhook-receiver.js';
import { completion, createWorld, submitJob, type World } from '../support/world.js';

/**
 * Exactly the committed effects are announced: every settlement, credit, overdraft and
 * hold expiry writes its tenant's message in its own transaction (a transactional outbox),
 * under single and batched settlement; an effect that rolls back writes none.
 */

const db = await freshDatabase();
// A capture refused for good for listed jobs: its transaction rolls back on every attempt.
const refusals = await refuseCapturesOnDemand(db.pool);

const server = await startServer(db.url, {
  workers: 1,
  env: { TALLY_OUTBOUND_ALLOW: '127.0.0.1', TALLY_OUTBOUND_BACKOFF_MS: '40', TALLY_POLL_INTERVAL_MS: '50', TALLY_MAX_ATTEMPTS: '2', TALLY_SETTLE_BATCH_SIZE: '16' },
});
const admin = new Client(server.url);
const receiver = await WebhookReceiver.start();
afterAll(() => receiver.close());

async function listening(world: World): Promise<string> {
  const endpoint = await world.tenant.post('/v1/webhook-endpoints', { url: `${receiver.url}/${world.tenantId}`, events: ['*'] });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  return endpoint.body.secret;
}

const messagesOf = (world: World) => receiver.received.filter((r) => r.path === `/${world.tenantId}`);

function verified(received: Received, secret: string): any {
  return new Webhook(secret).verify(received.body, received.headers);
}

describe('messages for committed effects', () => {
  it('announces credits, captures, releases and adjustments once each, signed', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const secret = await listening(world);
    await admin.post(`/v1/wallets/${world.walletId}/credits`, { amount: '25.00', reference: 'pay_42' }, { 'idempotency-key': randomUUID() });
    const captured = await submitJob(world);
    const released = await submitJob(world);
    const corrected = await submitJob(world);
    await deliver(server.url, world.provider, signDelivery(completion(world, captured.id, { input_tokens: 1000, output_tokens: 100 })));
    await deliver(server.url, world.provider, signDelivery(completion(world, released.id, {}, 'job.failed')));
    await deliver(server.url, world.provider, signDelivery(completion(world, corrected.id, { input_tokens: 2000, output_tokens: 0 })));
    await waitUntil(async () => (await world.tenant.get(`/v1/jobs/${corrected.id}`)).body.state === 'captured');
    await deliver(server.url, world.provider, signDelivery(completion(world, corrected.id, { input_tokens: 3000, output_tokens: 0 }, 'job.usage_corrected', { correction: 1 })));
    // Duplicates of every delivery: no second effect, no second message.
    await receiver.waitFor(() => messagesOf(world).filter((r) => r.json?.type === 'job.settled').length >= 4);

    const bodies = messagesOf(world).map((r) => verified(r, secret) as any);
    const ids = messagesOf(world).map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(ids.length);
    const credited = bodies.filter((b) => b.type === 'wallet.credited');
    expect(credited).toEqual([
      { type: 'wallet.credited', timestamp: expect.any(String), data: { wallet_id: world.walletId, amount: '25.000000', currency: 'USD', balance: '25.000000', reference: 'pay_42' } },
    ]);
    const settled = bodies.filter((b) => b.type === 'job.settled').map((b) => `${b.data.job.id}:${b.data.charge_type}`);
    expect(settled.sort()).toEqual([`${captured.id}:capture`, `${released.id}:release`, `${corrected.id}:capture`, `${corrected.id}:adjustment`].sort());
    const capture = bodies.find((b) => b.type === 'job.settled' && b.data.job.id === captured.id)!;
    const view = (await world.tenant.get(`/v1/jobs/${captured.id}`)).body;
    expect(capture.data).toEqual({
      charge_type: 'capture',
      amount: view.captured,
      currency: 'USD',
      settlement_key: view.settlements[0].key,
      job: { id: captured.id, state: 'captured', wallet_id: world.walletId, model: world.model, provider: world.provider },
    });
  });

  it('writes no message for an effect that rolled back', async () => {
    const world = await createWorld(admin);
    await listening(world);
    const job = await submitJob(world);
    await refusals.refuse(job.id);
    await deliver(server.url, world.provider, signDelivery(completion(world, job.id, { input_tokens: 10, output_tokens: 1 })));
    await waitUntil(async () => (await world.tenant.get(`/v1/jobs/${job.id}`)).body.events[0]?.state === 'dead');
    const rows = await db.pool.query(`select count(*)::int as n from outbound_messages where tenant_id = $1 and type = 'job.settled'`, [world.tenantId]);
    expect(rows.rows[0].n).toBe(0);
    expect(messagesOf(world).filter((r) => r.json?.type === 'job.settled')).toEqual([]);
  });

  it('under batched settlement: one message per settlement of 40 jobs settled together', async () => {
    const world = await createWorld(admin);
    await listening(world);
    const jobs = await Promise.all(Array.from({ length: 40 }, () => submitJob(world, { input_tokens: 100, output_tokens: 10 })));
    await Promise.all(jobs.map((j) => deliver(server.url, world.provider, signDelivery(completion(world, j.id, { input_tokens: 50, output_tokens: 5 })))));
    await receiver.waitFor(() => messagesOf(world).filter((r) => r.json?.type === 'job.settled').length >= 40);
    const settledJobs = messagesOf(world).filter((r) => r.json?.type === 'job.settled').map((r) => r.json.data.job.id);
    expect(new Set(settledJobs)).toEqual(new Set(jobs.map((j) => j.id)));
    const stored = await db.pool.query(`select count(*)::int as n from outbound_messages where tenant_id = $1 and type = 'job.settled'`, [world.tenantId]);
    expect(stored.rows[0].n).toBe(40);
  });

  it('announces an overdraft and a hold expiry', async () => {
    // As in the ledger's own test: a correction charges job 1 up to its reservation while
    // job 2 holds the rest, then job 2's capture of delivered work takes the balance below zero.
    const world = await createWorld(admin, { credit: '0.02' });
    await listening(world);
    const settledState = (id: string, state: string) => waitUntil(async () => (await world.tenant.get(`/v1/jobs/${id}`)).body.state === state);
    const first = await submitJob(world); // reserves 0.02
    await deliver(server.url, world.provider, signDelivery(completion(world, first.id, { input_tokens: 1000, output_tokens: 0 })));
    await settledState(first.id, 'captured'); // 0.001 captured, balance 0.019
    const second = await submitJob(world, { input_tokens: 19_000 }); // reserves 0.019
    await deliver(server.url, world.provider, signDelivery(completion(world, first.id, { input_tokens: 10_000, output_tokens: 5_000 }, 'job.usage_corrected', { correction: 1 })));
    await waitUntil(async () => (await world.tenant.get(`/v1/jobs/${first.id}`)).body.adjusted !== '0.000000');
    await deliver(server.url, world.provider, signDelivery(completion(world, second.id, { input_tokens: 19_000 })));
    await receiver.waitFor(() => messagesOf(world).some((r) => r.json?.type === 'wallet.overdrawn'));
    const overdrawn = messagesOf(world).find((r) => r.json?.type === 'wallet.overdrawn')!.json.data;
    expect(overdrawn).toEqual({ wallet_id: world.walletId, currency: 'USD', balance: '-0.019000' });

    // A hold that expires with no terminal event: reconciliation's repair releases it.
    const other = await createWorld(admin, { policies: { hold_ttl_seconds: 1 } });
    await listening(other);
    const stale = await submitJob(other);
    await waitUntil(async () => (await db.pool.query('select now() > hold_expires_at as expired from jobs where id = $1', [stale.id])).rows[0].expired);
    expect((await admin.post('/v1/reconciliation/runs', { repair: true })).status).toBe(201);
    await receiver.waitFor(() => messagesOf(other).some((r) => r.json?.type === 'hold.expired'));
    const expired = messagesOf(other).find((r) => r.json?.type === 'hold.expired')!.json.data;
    expect(expired).toEqual({ job_id: stale.id, wallet_id: other.walletId, amount: stale.reserved, currency: 'USD' });
  });
});
