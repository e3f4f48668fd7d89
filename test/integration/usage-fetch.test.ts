import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { receiveWebhook } from '../../src/intake/receive.js';
import { settle } from '../../src/ledger/settle.js';
import { findInconsistencies } from '../../src/reconcile/checks.js';
import { claimEvents, type ClaimedEvent } from '../../src/queue/index.js';
import { MAX_SETTLE_ATTEMPTS } from '../../src/worker/retry-policy.js';
import { settleEvent } from '../../src/worker/settle-event.js';
import { USAGE_FETCH_RETRY } from '../../src/worker/usage-fetch.js';
import { freshDatabase } from '../support/database.js';
import { FakeProviderApi, HeldAnswer } from '../support/fake-provider-api.js';
import { TEST_SERVER_SECRET, createOpenaiWorld, submitOpenaiJob } from '../support/fixtures.js';
import { jobDeliveries } from '../support/jobs.js';
import { uncachedProviders } from '../../src/catalog/provider-cache.js';

/**
 * The usage-fetch step of the worker (worker/usage-fetch.ts), driven call by call against
 * a real database and a fake OpenAI API: states, fencing, the separate retry path.
 */
const db = await freshDatabase();
const api = await FakeProviderApi.start();
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const API_KEY = `sk-integration-${randomUUID()}`;
const LEASE_SECONDS = 60;

// input 1.00, cached input 0.50, output 2.00 per 1M tokens; limits reserve 0.025000
const UNIT_PRICES = { input_tokens: 1_000_000n, cached_input_tokens: 500_000n, output_tokens: 2_000_000n };
const LIMITS = { input_tokens: 10_000, cached_input_tokens: 10_000, output_tokens: 5_000 };
const RESERVED = 25_000n;

async function openaiWorld() {
  const world = await createOpenaiWorld(db.pool, { secret: SECRET, apiKey: API_KEY, baseUrl: api.url }, UNIT_PRICES);
  const { job, ref, path } = await submitOpenaiJob(db.pool, world, LIMITS);
  expect(job.reserved).toBe(RESERVED);
  return { provider: world.provider, model: world.model, ref, job, path };
}
type World = Awaited<ReturnType<typeof openaiWorld>>;

/** A signed OpenAI webhook through the real intake. */
async function deliver(world: World, type = 'response.completed') {
  const raw = JSON.stringify({ id: `evt_${randomUUID()}`, type, created_at: 1750861210, data: { id: world.ref } });
  const id = `wh_${randomUUID()}`;
  const now = new Date();
  const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': new Webhook(SECRET).sign(id, now, raw) };
  const result = await receiveWebhook(db.pool, uncachedProviders(db.pool, TEST_SERVER_SECRET), world.provider, Buffer.from(raw), headers);
  expect(result.status).toBe('accepted');
  return id;
}

function response(world: World, over: Record<string, unknown> = {}) {
  return {
    id: world.ref,
    object: 'response',
    status: 'completed',
    model: world.model,
    usage: { input_tokens: 1500, input_tokens_details: { cached_tokens: 1024 }, output_tokens: 500, total_tokens: 2000 },
    ...over,
  };
}
// 476 × 1 + 1024 × 0.5 + 500 × 2 micros
const CAPTURED = 476n + 512n + 1000n;

/** Claims the next ready event, which must be this one (each test leaves nothing behind). */
async function claim(eventKey: string): Promise<ClaimedEvent> {
  const claims = await claimEvents(db.pool, 1, LEASE_SECONDS);
  expect(claims.map((c) => c.event_key)).toEqual([eventKey]);
  return claims[0]!;
}

/** Makes a backed-off event ready now: the test stands in for the passing of time. */
async function makeReady(eventKey: string) {
  await db.pool.query('update webhook_events set run_after = now() where event_key = $1', [eventKey]);
}

async function eventRow(eventKey: string) {
  const result = await db.pool.query(
    `select state, reason, attempts, fetch_attempts, usage, usage_fetched_at, last_error,
            extract(epoch from run_after - now())::float8 as delay_seconds
     from webhook_events where event_key = $1`,
    [eventKey],
  );
  return result.rows[0];
}

async function jobRow(jobId: string) {
  return (await db.pool.query('select state, resume_state, captured, released from jobs where id = $1', [jobId])).rows[0];
}

async function settlements(jobId: string) {
  return (await db.pool.query('select charge_type, amount from settlements where job_id = $1', [jobId])).rows;
}

describe('fetching usage before settling (OpenAI)', () => {
  it('fetch failures back off from 1 s doubling to 30 s, never count as settle attempts and never dead-letter', async () => {
    const world = await openaiWorld();
    api.script(world.path, { status: 500, body: { error: 'down' } });
    const key = await deliver(world);
    const failures = MAX_SETTLE_ATTEMPTS + 4;
    for (let failure = 1; failure <= failures; failure++) {
      const outcome = await settleEvent(db.pool, await claim(key));
      expect(outcome.kind).toBe('retry');
      const row = await eventRow(key);
      expect(row).toMatchObject({ state: 'pending', attempts: 0, fetch_attempts: failure, usage: null, usage_fetched_at: null });
      const ceiling = Math.min(USAGE_FETCH_RETRY.capMs, USAGE_FETCH_RETRY.baseMs * 2 ** (failure - 1)) / 1000;
      expect(row.delay_seconds).toBeGreaterThan(ceiling / 2 - 0.5);
      expect(row.delay_seconds).toBeLessThanOrEqual(ceiling);
      expect(row.last_error).toContain('answered 500');
      expect(row.last_error).not.toContain(API_KEY);
      expect(await jobRow(world.job.id)).toMatchObject({ state: 'usage_pending', resume_state: 'reserved', captured: null });
      expect(await settlements(world.job.id)).toEqual([]);
      await makeReady(key);
    }
    expect(api.requestsTo(world.path)).toHaveLength(failures);
    expect(api.requestsTo(world.path).every((r) => r.authorization === `Bearer ${API_KEY}`)).toBe(true);

    // Five minutes of failing: reconciliation reports event_stuck, never event_dead.
    await db.pool.query(`update webhook_events set received_at = now() - interval '6 minutes' where event_key = $1`, [key]);
    const findings = (await findInconsistencies(db.pool)).filter((f) => f.objects['event_key'] === key);
    expect(findings.map((f) => f.class)).toEqual(['event_stuck']);

    // Then the API answers: exactly one capture, from the stored usage.
    api.script(world.path, { status: 200, body: response(world) });
    const outcome = await settleEvent(db.pool, await claim(key));
    expect(outcome).toMatchObject({ kind: 'settled', result: { outcome: 'applied', jobState: 'captured' } });
    expect(await eventRow(key)).toMatchObject({
      state: 'applied',
      attempts: 1,
      fetch_attempts: failures,
      usage: { input_tokens: 476, cached_input_tokens: 1024, output_tokens: 500 },
    });
    expect(await settlements(world.job.id)).toEqual([{ charge_type: 'capture', amount: CAPTURED }]);
  });

  it('a claim that lost its lease during the fetch stores nothing; the new owner settles once', async () => {
    const world = await openaiWorld();
    const slow = new HeldAnswer();
    api.script(world.path, slow, { status: 200, body: response(world) });
    const key = await deliver(world);
    const first = await claim(key);
    const firstOutcome = settleEvent(db.pool, first);
    await slow.arrived;
    // The first worker is stuck in its fetch past its lease; another claims the event.
    await db.pool.query(`update webhook_events set lease_until = now() - interval '1 second' where event_key = $1`, [key]);
    const second = await claim(key);
    expect(second.fencing_token).toBeGreaterThan(first.fencing_token);
    expect(await settleEvent(db.pool, second)).toMatchObject({ kind: 'settled', result: { jobState: 'captured' } });
    // The old owner's answer arrives last (and differs): its write is fenced off.
    slow.answer(200, response(world, { usage: { input_tokens: 9, output_tokens: 9 } }));
    expect(await firstOutcome).toEqual({ kind: 'lease_lost' });
    expect(await settlements(world.job.id)).toEqual([{ charge_type: 'capture', amount: CAPTURED }]);
    expect(await eventRow(key)).toMatchObject({ state: 'applied', usage: { input_tokens: 476, cached_input_tokens: 1024, output_tokens: 500 } });
  });

  it('an object of another id restores the job\'s state (here cancel_requested), records event_mismatch and bills nothing', async () => {
    const world = await openaiWorld();
    await settle(db.pool, { jobId: world.job.id, event: { type: 'cancel.requested' } });
    api.script(world.path, { status: 200, body: response(world, { id: 'resp_someone_else' }) });
    const key = await deliver(world);
    expect(await settleEvent(db.pool, await claim(key))).toEqual({ kind: 'usage_mismatch', field: 'id' });
    expect(await jobRow(world.job.id)).toMatchObject({ state: 'cancel_requested', resume_state: null, captured: null });
    expect(await eventRow(key)).toMatchObject({ state: 'no_effect', reason: 'event_mismatch', usage: null });
    expect(await settlements(world.job.id)).toEqual([]);
    expect((await jobDeliveries(db.pool, world.job.id, key)).map((d) => d.outcome)).toEqual(['accepted', 'event_mismatch']);
    // The accepted delivery is its event; the mismatch alone has an attempt row, with why.
    const attempts = await db.pool.query(`select outcome, detail from delivery_attempts where event_key = $1`, [key]);
    expect(attempts.rows.map((r) => r.outcome)).toEqual(['event_mismatch']);
    expect(attempts.rows[0].detail).toMatchObject({ mismatch: 'id', source: 'usage_fetch', got: 'resp_someone_else' });
    const findings = (await findInconsistencies(db.pool)).filter((f) => f.objects['event_key'] === key);
    expect(findings.map((f) => f.class)).toEqual(['event_mismatch']);
    // The hold is still open and the cancel still stands: the grace releases it.
    await settle(db.pool, { jobId: world.job.id, event: { type: 'cancel.grace_elapsed' } });
    expect(await settlements(world.job.id)).toEqual([{ charge_type: 'release', amount: RESERVED }]);
  });

  it('a job whose hold is already resolved is not fetched for: a late completion is recorded with no effect', async () => {
    const world = await openaiWorld();
    await settle(db.pool, { jobId: world.job.id, event: { type: 'cancel.requested' } });
    await settle(db.pool, { jobId: world.job.id, event: { type: 'cancel.grace_elapsed' } });
    api.script(world.path, { status: 200, body: response(world) });
    const key = await deliver(world);
    expect(await settleEvent(db.pool, await claim(key))).toMatchObject({
      kind: 'settled',
      result: { outcome: 'no_effect', reason: 'job_already_released', alerts: ['late_success_after_release'] },
    });
    expect(api.requestsTo(world.path)).toEqual([]);
    expect(await settlements(world.job.id)).toEqual([{ charge_type: 'release', amount: RESERVED }]);
  });

  it('usage stored by an earlier claim is settled without fetching again', async () => {
    const world = await openaiWorld();
    api.script(world.path, { status: 200, body: response(world) });
    const key = await deliver(world);
    const first = await claim(key);
    // The first claim fetched and stored, then its worker died before settling.
    await db.pool.query(
      `update webhook_events set usage = '{"input_tokens": 476, "cached_input_tokens": 1024, "output_tokens": 500}', usage_fetched_at = now(),
              lease_until = now() - interval '1 second' where event_key = $1 and fencing_token = $2`,
      [key, first.fencing_token.toString()],
    );
    await db.pool.query(`update jobs set resume_state = state, state = 'usage_pending' where id = $1`, [world.job.id]);
    expect(await settleEvent(db.pool, await claim(key))).toMatchObject({ kind: 'settled', result: { jobState: 'captured' } });
    expect(api.requestsTo(world.path)).toEqual([]);
    expect(await settlements(world.job.id)).toEqual([{ charge_type: 'capture', amount: CAPTURED }]);
  });
});
