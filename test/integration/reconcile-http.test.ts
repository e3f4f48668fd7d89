import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { Client, deliver as deliverHttp, signDelivery } from '../support/client.js';
import { drain } from '../support/reconcile-world.js';
import { startServer } from '../support/server.js';
import { completion, createWorld, submitJob } from '../support/world.js';

/**
 * The reconciliation routes and POST /v1/provider-usage over HTTP, against `tally
 * serve --workers 0` (no in-process worker, so no scheduled run interferes; events are
 * settled in this process by the worker's own claim/settle functions). The tests share
 * the server's database and each leaves it clean.
 */
const db = await freshDatabase({ max: 6 });
const server = await startServer(db.url, { workers: 0 });
const admin = new Client(server.url);

async function run(body: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const answer = await admin.post('/v1/reconciliation/runs', body, headers);
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer;
}

describe('POST /v1/reconciliation/runs and GET /v1/reconciliation/runs/{id}', () => {
  it('a clean run: 201 {id, clean, exceptions}; GET returns the same run', async () => {
    const { body } = await run();
    expect(body).toMatchObject({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), clean: true, exceptions: [], repair: false });
    const fetched = await admin.get(`/v1/reconciliation/runs/${body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(body);
  });

  it('admin only; an unknown or malformed run id is 404', async () => {
    const tenant = await admin.post('/v1/tenants', { name: 'reconcile-outsider' });
    expect((await admin.as(null).post('/v1/reconciliation/runs', {})).status).toBe(401);
    expect((await admin.as(tenant.body.api_key).post('/v1/reconciliation/runs', {})).body).toMatchObject({ error: { code: 'forbidden' } });
    expect((await admin.as(tenant.body.api_key).post('/v1/provider-usage', { import_id: 'x', records: [] })).status).toBe(403);
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const answer = await admin.get(`/v1/reconciliation/runs/${id}`);
      expect([answer.status, answer.body.error.code]).toEqual([404, 'not_found']);
    }
  });

  it('an event mismatch sent to the webhook route is reported (the same exception run after run) until resolved with a note', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);
    const mismatched = await deliverHttp(server.url, world.provider, signDelivery(completion(world, job.id, { input_tokens: 1 }, 'job.completed', { model: 'not-the-model' }), { id: 'evt-http-mismatch' }));
    expect([mismatched.status, mismatched.body.error.code]).toEqual([422, 'event_mismatch']);

    const first = (await run()).body;
    expect(first.clean).toBe(false);
    expect(first.exceptions).toEqual([
      expect.objectContaining({
        id: expect.any(String),
        class: 'event_mismatch',
        objects: { provider: world.provider, event_key: 'evt-http-mismatch', job_id: job.id },
        resolved: false,
      }),
    ]);
    const second = (await run()).body;
    expect(second.exceptions.map((e: { id: string }) => e.id)).toEqual([first.exceptions[0].id]);
    expect((await admin.get(`/v1/reconciliation/runs/${first.id}`)).body).toEqual(first);

    const exceptionId = first.exceptions[0].id;
    expect((await admin.post(`/v1/reconciliation/exceptions/${exceptionId}/resolve`, {})).status).toBe(400);
    expect((await admin.post(`/v1/reconciliation/exceptions/${exceptionId}/resolve`, { note: '' })).status).toBe(400);
    expect((await admin.post(`/v1/reconciliation/exceptions/${randomUUID()}/resolve`, { note: 'x' })).status).toBe(404);
    const resolved = await admin.post(`/v1/reconciliation/exceptions/${exceptionId}/resolve`, { note: 'provider sent a test event' });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ id: exceptionId, class: 'event_mismatch', resolved: true, resolution_note: 'provider sent a test event' });

    const after = (await run()).body;
    expect(after).toMatchObject({ clean: true, exceptions: [] });
    expect(after.resolved_exceptions).toEqual([expect.objectContaining({ id: exceptionId, resolved: true, resolution_note: 'provider sent a test event' })]);
  });

  it('{repair: true} releases an expired hold with its key …:release:1, visible in the job view', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);
    await db.pool.query(`update holds set expires_at = now() - interval '1 minute' where job_id = $1`, [job.id]);
    expect((await run()).body.exceptions).toEqual([expect.objectContaining({ class: 'hold_open_past_expiry', objects: { job_id: job.id, wallet_id: world.walletId } })]);

    const repaired = (await run({ repair: true })).body;
    expect(repaired).toMatchObject({ clean: true, repair: true, repairs: [{ class: 'hold_open_past_expiry', action: 'release_hold', result: 'hold_expired' }] });
    const view = await world.tenant.get(`/v1/jobs/${job.id}`);
    expect(view.body).toMatchObject({ state: 'released', released: job.reserved, captured: '0.000000' });
    expect(view.body.settlements).toEqual([expect.objectContaining({ key: `${world.tenantId}:${job.id}:release:1`, charge_type: 'release' })]);
    expect((await run({ repair: true })).body).toMatchObject({ clean: true, repairs: [] });
  });

  it('accepts an Idempotency-Key: the same key replays the first run', async () => {
    const key = randomUUID();
    const first = await run({}, { 'idempotency-key': key });
    const replay = await run({}, { 'idempotency-key': key });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    const other = await run({}, { 'idempotency-key': randomUUID() });
    expect(other.body.id).not.toBe(first.body.id);
  });
});

describe('POST /v1/provider-usage', () => {
  it('imports records, idempotent per import_id; reconciliation reports the one that disagrees', async () => {
    const world = await createWorld(admin);
    const agreeing = await submitJob(world, undefined, { provider_job_ref: 'pj-http-a' });
    const differing = await submitJob(world, undefined, { provider_job_ref: 'pj-http-b' });
    for (const job of [agreeing, differing]) {
      expect((await deliverHttp(server.url, world.provider, signDelivery(completion(world, job.id, { input_tokens: 1000, output_tokens: 10 })))).status).toBe(200);
    }
    await drain(db.pool);
    const records = [
      { provider: world.provider, provider_job_ref: 'pj-http-a', usage: { input_tokens: 1000, output_tokens: 10 } },
      { provider: world.provider, provider_job_ref: 'pj-http-b', usage: { input_tokens: 1000, output_tokens: 12 } },
    ];

    const first = await admin.post('/v1/provider-usage', { import_id: 'daily-1', records });
    expect([first.status, first.body]).toEqual([201, { imported: 2, already_imported: 0 }]);
    const again = await admin.post('/v1/provider-usage', { import_id: 'daily-1', records });
    expect([again.status, again.body]).toEqual([201, { imported: 0, already_imported: 2 }]);
    const reordered = await admin.post('/v1/provider-usage', { import_id: 'daily-1', records: [{ ...records[1]!, usage: { output_tokens: 12, input_tokens: 1000 } }] });
    expect([reordered.status, reordered.body]).toEqual([201, { imported: 0, already_imported: 1 }]);
    expect(await db.pool.query('select count(*)::int as n from provider_usage where import_id = $1', ['daily-1']).then((r) => r.rows[0].n)).toBe(2);

    const found = (await run()).body;
    expect(found.exceptions).toEqual([
      expect.objectContaining({
        class: 'usage_mismatch',
        objects: { job_id: differing.id, provider: world.provider, provider_job_ref: 'pj-http-b' },
        detail: { accepted: { input_tokens: 1000, output_tokens: 10 }, provider_reported: { input_tokens: 1000, output_tokens: 12 }, import_id: 'daily-1' },
      }),
    ]);
    const resolved = await admin.post(`/v1/reconciliation/exceptions/${found.exceptions[0].id}/resolve`, { note: 'rounding on their side' });
    expect(resolved.status).toBe(200);
    expect((await run()).body.clean).toBe(true);
  });

  it('the same import_id with other numbers for a job it holds is refused (422 import_id_reused), nothing stored', async () => {
    const base = { provider: 'acme', provider_job_ref: 'pj-reuse' };
    expect((await admin.post('/v1/provider-usage', { import_id: 'reuse-1', records: [{ ...base, usage: { input_tokens: 5 } }] })).status).toBe(201);
    const reused = await admin.post('/v1/provider-usage', {
      import_id: 'reuse-1',
      records: [
        { ...base, provider_job_ref: 'pj-reuse-new', usage: { input_tokens: 1 } },
        { ...base, usage: { input_tokens: 6 } },
      ],
    });
    expect([reused.status, reused.body.error?.code]).toEqual([422, 'import_id_reused']);
    const stored = await db.pool.query(`select provider_job_ref, usage from provider_usage where import_id = 'reuse-1' order by provider_job_ref`);
    expect(stored.rows).toEqual([{ provider_job_ref: 'pj-reuse', usage: { input_tokens: 5 } }]);
    const conflicting = await admin.post('/v1/provider-usage', {
      import_id: 'reuse-2',
      records: [
        { ...base, usage: { input_tokens: 1 } },
        { ...base, usage: { input_tokens: 2 } },
      ],
    });
    expect([conflicting.status, conflicting.body.error?.code]).toEqual([400, 'invalid_request']);
    await db.pool.query(`delete from provider_usage where import_id like 'reuse-%'`); // leave the database clean for the next test
  });

  it('refuses invalid records with 400 and stores nothing; an Idempotency-Key replays the answer', async () => {
    const invalid = [
      { import_id: 'bad', records: [{ provider: 'acme', provider_job_ref: 'r', usage: { input_tokens: -1 } }] },
      { import_id: 'bad', records: [{ provider: 'acme', provider_job_ref: 'r', usage: { input_tokens: '5' } }] },
      { import_id: 'bad', records: [{ provider: 'acme', provider_job_ref: 'r', usage: { input_tokens: 1.5 } }] },
      { import_id: 'bad', records: [{ provider: '', provider_job_ref: 'r', usage: {} }] },
      { import_id: '', records: [] },
      { records: [] },
    ];
    for (const body of invalid) {
      const answer = await admin.post('/v1/provider-usage', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error.code).toMatch(/^[a-z_]+$/);
    }
    expect(await db.pool.query(`select count(*)::int as n from provider_usage where import_id = 'bad'`).then((r) => r.rows[0].n)).toBe(0);

    const key = randomUUID();
    const body = { import_id: 'keyed', records: [{ provider: 'acme', provider_job_ref: 'pj-keyed', usage: { input_tokens: 0 } }] };
    const first = await admin.post('/v1/provider-usage', body, { 'idempotency-key': key });
    const replay = await admin.post('/v1/provider-usage', body, { 'idempotency-key': key });
    expect([first.status, first.body]).toEqual([201, { imported: 1, already_imported: 0 }]);
    expect([replay.status, replay.body, replay.headers.get('idempotent-replayed')]).toEqual([201, { imported: 1, already_imported: 0 }, 'true']);
    // zero usage for an unknown job: the provider reports no work, so nothing disagrees
    expect((await run()).body.clean).toBe(true);
  });
});
