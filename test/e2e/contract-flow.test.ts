import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { startServer, waitUntil } from '../support/server.js';
import { Client, deliver, signDelivery } from '../support/client.js';
import { completion, createWorld, submitJob } from '../support/world.js';

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 2 });
const admin = new Client(server.url);

async function settledJob(world: Awaited<ReturnType<typeof createWorld>>, jobId: string, state: string) {
  let job: any;
  await waitUntil(async () => {
    job = (await world.tenant.get(`/v1/jobs/${jobId}`)).body;
    return job.state === state && job.events.every((e: any) => !['pending', 'processing'].includes(e.state));
  });
  return job;
}

describe('the CONTRACT flow over HTTP', () => {
  it('tenant → provider → price → wallet → credit → job → signed completion → captured, balances exact', async () => {
    const world = await createWorld(admin, { credit: '100.00' });
    const job = await submitJob(world, { input_tokens: 10_000, output_tokens: 5_000 });
    // reservation = 10,000 × 1.00/1M + 5,000 × 2.00/1M = 0.02
    expect(job).toMatchObject({ state: 'reserved', reserved: '0.020000', price_version: 1 });
    const reservedWallet = await world.tenant.get(`/v1/wallets/${world.walletId}`);
    expect(reservedWallet.body).toMatchObject({ balance: '100.000000', reserved: '0.020000', available: '99.980000' });

    const answer = await deliver(server.url, world.provider, signDelivery(completion(world, job.id, { input_tokens: 1200, output_tokens: 340 })));
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe('accepted');

    const view = await settledJob(world, job.id, 'captured');
    // 1200 × 1.00/1M + 340 × 2.00/1M = 0.0012 + 0.00068 = 0.00188
    expect(view).toMatchObject({ reserved: '0.020000', captured: '0.001880', released: '0.018120', adjusted: '0.000000' });
    expect(view.settlements).toHaveLength(1);
    expect(view.settlements[0]).toMatchObject({ charge_type: 'capture', version: 1, amount: '0.001880', key: `${world.tenantId}:${job.id}:capture:1` });
    expect(view.events).toHaveLength(1);
    expect(view.events[0]).toMatchObject({ type: 'job.completed', state: 'applied' });

    const wallet = await world.tenant.get(`/v1/wallets/${world.walletId}`);
    expect(wallet.body).toMatchObject({ balance: '99.998120', reserved: '0.000000', available: '99.998120' });
    const entries = await world.tenant.get(`/v1/wallets/${world.walletId}/entries`);
    expect(entries.body.data.map((e: any) => [e.entry_type, e.amount])).toEqual([
      ['release_remainder', '0.018120'],
      ['capture', '-0.001880'],
      ['reserve', '-0.020000'],
      ['credit', '100.000000'],
    ]);
  });

  it('serves the OpenAPI document and metrics', async () => {
    const doc = await admin.get('/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/v1/jobs', '/v1/webhooks/{provider}', '/v1/wallets/{id}/credits']));
    const metrics = await fetch(`${server.url}/metrics`);
    const text = await metrics.text();
    expect(text).toContain('tally_queue_depth');
    expect(text).toContain('tally_settlements{charge_type="capture"}');
  });
});
