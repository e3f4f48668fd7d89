import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Client, deliver, signDelivery } from '../support/client.js';
import { freshDatabase } from '../support/database.js';
import { startServer, waitUntil } from '../support/server.js';
import { completion, createWorld, submitJob, type World } from '../support/world.js';

/**
 * POST /v1/jobs/{id}/adjustments (issue 37 item 7): an operator bills what reconciliation
 * showed was not billed — a usage_mismatch, a late_success_after_release — through the
 * same settlement path and kernel, keyed, once however often the call is retried, shown in
 * the job view and resolving the exception it answers. A real server and worker.
 */
const db = await freshDatabase();
const server = await startServer(db.url, { workers: 1, env: { TALLY_POLL_INTERVAL_MS: '50' } });
const admin = new Client(server.url);

async function settled(world: World, jobId: string, state: string) {
  await waitUntil(async () => (await world.tenant.get(`/v1/jobs/${jobId}`)).body.state === state);
  return (await world.tenant.get(`/v1/jobs/${jobId}`)).body;
}

const adjust = (jobId: string, body: Record<string, unknown>, key = randomUUID()) =>
  admin.post(`/v1/jobs/${jobId}/adjustments`, body, { 'idempotency-key': key });

describe('an operator’s adjustment', () => {
  it('bills a usage_mismatch once, however often and however concurrently the call is retried, and resolves its exception', async () => {
    const world = await createWorld(admin, { credit: '10.00' });
    const ref = `pj_${randomUUID()}`;
    const job = await submitJob(world, { input_tokens: 10_000, output_tokens: 5_000 }, { provider_job_ref: ref });
    await deliver(server.url, world.provider, signDelivery(completion(world, job.id, { input_tokens: 1_000, output_tokens: 0 })));
    expect((await settled(world, job.id, 'captured')).captured).toBe('0.001000');
    const imported = await admin.post('/v1/provider-usage', {
      import_id: `imp-${randomUUID()}`,
      records: [{ provider: world.provider, provider_job_ref: ref, usage: { input_tokens: 2_000, output_tokens: 0 } }],
    });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    const run = await admin.post('/v1/reconciliation/runs', {});
    const mismatch = run.body.exceptions.find((e: any) => e.class === 'usage_mismatch' && e.objects.job_id === job.id);
    expect(mismatch).toBeDefined();

    const key = randomUUID();
    const body = {
      usage: { input_tokens: 2_000, output_tokens: 0 },
      reason: 'provider records 2,000 input tokens',
      exception_id: mismatch.id,
    };
    const answers = await Promise.all(Array.from({ length: 12 }, () => adjust(job.id, body, key)));
    for (const answer of answers) expect([201, 409]).toContain(answer.status);
    const first = answers.find((a) => a.status === 201)!;
    for (const answer of answers.filter((a) => a.status === 409)) expect(answer.body.error.code).toBe('idempotency_key_in_use');
    const replay = await adjust(job.id, body, key);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);

    const view = (await world.tenant.get(`/v1/jobs/${job.id}`)).body;
    expect(view).toMatchObject({ state: 'captured', captured: '0.001000', adjusted: '0.001000' });
    const adjustments = view.settlements.filter((s: any) => s.charge_type === 'adjustment');
    expect(adjustments).toHaveLength(1);
    expect(adjustments[0]).toMatchObject({ version: 1, amount: '0.001000', reason: 'operator: provider records 2,000 input tokens' });
    expect((await world.tenant.get(`/v1/wallets/${world.walletId}`)).body.balance).toBe('9.998000');
    // A second call with another key and the same usage charges nothing more: the total is billable(usage).
    const again = await adjust(job.id, body);
    expect(again.status).toBe(201);
    expect(again.body.adjusted).toBe('0.001000');
    expect((await world.tenant.get(`/v1/wallets/${world.walletId}`)).body.balance).toBe('9.998000');

    const after = await admin.post('/v1/reconciliation/runs', {});
    const still = after.body.exceptions.find((e: any) => e.id === mismatch.id);
    expect(still?.resolved ?? true).toBe(true);
    expect(after.body.exceptions.filter((e: any) => e.objects.job_id === job.id && !e.resolved)).toEqual([]);
  });

  it('bills work delivered after a release (late_success_after_release)', async () => {
    const world = await createWorld(admin, { credit: '10.00' });
    const job = await submitJob(world);
    await deliver(server.url, world.provider, signDelivery(completion(world, job.id, {}, 'job.failed')));
    await settled(world, job.id, 'released');
    await deliver(server.url, world.provider, signDelivery(completion(world, job.id, { input_tokens: 4_000, output_tokens: 1_000 })));
    await waitUntil(async () => (await world.tenant.get(`/v1/jobs/${job.id}`)).body.events.every((e: any) => e.state !== 'pending'));
    const answer = await adjust(job.id, { usage: { input_tokens: 4_000, output_tokens: 1_000 }, reason: 'completed after its release' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body).toMatchObject({ state: 'released', released: '0.020000', adjusted: '0.006000' });
    expect((await world.tenant.get(`/v1/wallets/${world.walletId}`)).body).toMatchObject({ balance: '9.994000', reserved: '0.000000' });
  });

  it('refuses a job whose hold is open (409 job_not_terminal), a tenant (403), an unknown job or exception (404), bad usage (400)', async () => {
    const world = await createWorld(admin, { credit: '10.00' });
    const job = await submitJob(world);
    const open = await adjust(job.id, { usage: { input_tokens: 1 }, reason: 'x' });
    expect(open.status).toBe(409);
    expect(open.body.error.code).toBe('job_not_terminal');
    const byTenant = await world.tenant.post(
      `/v1/jobs/${job.id}/adjustments`,
      { usage: { input_tokens: 1 }, reason: 'x' },
      { 'idempotency-key': randomUUID() },
    );
    expect(byTenant.status).toBe(403);
    expect((await adjust(randomUUID(), { usage: { input_tokens: 1 }, reason: 'x' })).status).toBe(404);
    await deliver(server.url, world.provider, signDelivery(completion(world, job.id, { input_tokens: 1_000 })));
    await settled(world, job.id, 'captured');
    const unknownException = await adjust(job.id, { usage: { input_tokens: 1 }, reason: 'x', exception_id: randomUUID() });
    expect(unknownException.status).toBe(404);
    expect((await world.tenant.get(`/v1/jobs/${job.id}`)).body.adjusted).toBe('0.000000');
    const negative = await adjust(job.id, { usage: { input_tokens: -1 }, reason: 'x' });
    expect(negative.status).toBe(400);
    const noKey = await admin.post(`/v1/jobs/${job.id}/adjustments`, { usage: { input_tokens: 1 }, reason: 'x' });
    expect(noKey.status).toBe(400);
    expect(noKey.body.error.code).toBe('idempotency_key_required');
  });
});
