import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { createPool } from '../../src/db/pool.js';
import { receiveWebhook } from '../../src/intake/receive.js';
import { claimEvents, type ClaimedEvent } from '../../src/queue/index.js';
import { MAX_SETTLE_ATTEMPTS } from '../../src/worker/retry-policy.js';
import { settleEvent, type EventOutcome } from '../../src/worker/settle-event.js';
import { Worker } from '../../src/worker/worker.js';
import { freshDatabase } from '../support/database.js';
import { FakeProviderApi, HeldAnswer } from '../support/fake-provider-api.js';
import { TEST_SERVER_SECRET, createOpenaiWorld, createWorld, insertClaimedEvent, submitOpenaiJob, submitWorldJob } from '../support/fixtures.js';
import { assertLedgerInvariants } from '../support/invariants.js';
import { uncachedProviders } from '../../src/catalog/provider-cache.js';

/**
 * Issue 11.5: a claim's lease must not lapse while its worker is still working on it
 * (a slow provider API), and a claim that is lost anyway is not an attempt. Real
 * workers, a real HTTP server that answers slower than the lease, real time.
 */
const db = await freshDatabase({ max: 30 });
const api = await FakeProviderApi.start();
afterEach(() => assertLedgerInvariants(db.pool));

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const API_KEY = `sk-lease-${randomUUID()}`;
// input 1.00, cached input 0.50, output 2.00 per 1M tokens (as in usage-fetch.test.ts)
const UNIT_PRICES = { input_tokens: 1_000_000n, cached_input_tokens: 500_000n, output_tokens: 2_000_000n };
const LIMITS = { input_tokens: 10_000, cached_input_tokens: 10_000, output_tokens: 5_000 };
const CAPTURED = 476n + 512n + 1000n;

async function openaiJobs(count: number) {
  const world = await createOpenaiWorld(db.pool, { secret: SECRET, apiKey: API_KEY, baseUrl: api.url }, UNIT_PRICES);
  const jobs = [];
  for (let i = 0; i < count; i++) jobs.push(await submitOpenaiJob(db.pool, world, LIMITS));
  return { provider: world.provider, model: world.model, jobs };
}

/** A signed response.completed through the real intake: an event whose usage is fetched. */
async function deliverCompletion(provider: string, ref: string): Promise<string> {
  const raw = JSON.stringify({ id: `evt_${randomUUID()}`, type: 'response.completed', created_at: 1750861210, data: { id: ref } });
  const id = `wh_${randomUUID()}`;
  const now = new Date();
  const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': new Webhook(SECRET).sign(id, now, raw) };
  expect((await receiveWebhook(db.pool, uncachedProviders(db.pool, TEST_SERVER_SECRET), provider, Buffer.from(raw), headers)).status).toBe('accepted');
  return id;
}

function responseFor(ref: string, model: string) {
  return {
    id: ref,
    object: 'response',
    status: 'completed',
    model,
    usage: { input_tokens: 1500, input_tokens_details: { cached_tokens: 1024 }, output_tokens: 500, total_tokens: 2000 },
  };
}

async function until(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits (on the database's clock) until the event's current lease has run out. */
async function leaseLapsed(eventKey: string): Promise<void> {
  await until(
    async () => (await db.pool.query(`select lease_until < now() as lapsed from webhook_events where event_key = $1`, [eventKey])).rows[0].lapsed === true,
    10_000,
    `the lease of ${eventKey} to lapse`,
  );
}

function quietLog(lines: string[]) {
  const record = (_obj: object, msg?: string) => void lines.push(msg ?? '');
  return { info: record, warn: record, error: record };
}

describe('leases never lapse mid-claim', () => {
  it('one claim of several usage fetches, each slower than the lease, beside a second worker: no event claimed twice, none billed twice', async () => {
    const LEASE_SECONDS = 2;
    const EVENTS = 3;
    const world = await openaiJobs(EVENTS);
    // The provider answers each GET a whole lease and a half after it arrived: one claim
    // of all three takes more than three leases.
    for (const { ref, path } of world.jobs) {
      const slow = new HeldAnswer();
      api.script(path, slow);
      void slow.arrived.then(() => setTimeout(() => slow.answer(200, responseFor(ref, world.model)), LEASE_SECONDS * 1000 + 500));
    }
    const keys: string[] = [];
    for (const { ref } of world.jobs) keys.push(await deliverCompletion(world.provider, ref));

    const outcomes: EventOutcome['kind'][] = [];
    const lines: string[] = [];
    const pools = [createPool(db.url, { max: 4 }), createPool(db.url, { max: 4 })];
    const workers = pools.map(
      (pool) =>
        new Worker(pool, {
          concurrency: 2,
          batchSize: 32,
          leaseSeconds: LEASE_SECONDS,
          pollIntervalMs: 50,
          dutyIntervalMs: 600_000,
          databaseUrl: db.url,
          log: quietLog(lines),
          onOutcome: (outcome) => void outcomes.push(outcome.kind),
        }),
    );
    try {
      for (const worker of workers) await worker.start();
      await until(
        async () =>
          (await db.pool.query(`select count(*)::int as n from webhook_events where event_key = any($1) and state not in ('pending', 'processing')`, [keys])).rows[0].n === EVENTS,
        60_000,
        'every event to settle',
      );
    } finally {
      for (const worker of workers) await worker.stop();
      for (const pool of pools) await pool.end();
    }

    // Each event was handled by exactly one claim: no claim was lost to another worker.
    expect(outcomes).toEqual(Array(EVENTS).fill('settled'));
    expect(lines.filter((l) => l.includes('claim lost'))).toEqual([]);
    for (const { path } of world.jobs) expect(api.requestsTo(path)).toHaveLength(1);
    const events = await db.pool.query(`select state, attempts, fetch_attempts from webhook_events where event_key = any($1)`, [keys]);
    expect(events.rows).toEqual(Array(EVENTS).fill({ state: 'applied', attempts: 1, fetch_attempts: 0 }));
    for (const { job } of world.jobs) {
      const captures = await db.pool.query(`select amount from settlements where job_id = $1`, [job.id]);
      expect(captures.rows).toEqual([{ amount: CAPTURED }]);
    }
  });
});

describe('a lost claim is not an attempt', () => {
  /** A pending completion as intake stores it; `usage` omitted makes it permanently invalid. */
  async function pendingCompletion(usage?: Record<string, number>) {
    const world = await createWorld(db.pool, { funds: 1_000_000n });
    const job = await submitWorldJob(db.pool, world);
    const event = await insertClaimedEvent(db.pool, job);
    await db.pool.query(
      `update webhook_events set state = 'pending', lease_until = null, attempts = 0, event = $3 where provider = $1 and event_key = $2`,
      [event.provider, event.eventKey, JSON.stringify(usage ? { type: 'job.completed', usage } : { type: 'job.completed' })],
    );
    return { job, eventKey: event.eventKey };
  }

  async function claimOne(eventKey: string, leaseSeconds: number): Promise<ClaimedEvent> {
    const claims = await claimEvents(db.pool, 1, leaseSeconds);
    expect(claims.map((c) => c.event_key)).toEqual([eventKey]);
    return claims[0]!;
  }

  it('re-claims after lapsed leases do not count: the first real failure after many of them is retried, not dead-lettered', async () => {
    const { job, eventKey } = await pendingCompletion({ input_tokens: 10, output_tokens: 10 });
    // Claims whose holders never came back, far more of them than MAX_SETTLE_ATTEMPTS.
    let claim = await claimOne(eventKey, 0.2);
    for (let lapse = 1; lapse <= MAX_SETTLE_ATTEMPTS + 2; lapse++) {
      await leaseLapsed(eventKey);
      claim = await claimOne(eventKey, 0.2);
    }
    expect(claim.attempts).toBe(1);
    await leaseLapsed(eventKey);
    claim = await claimOne(eventKey, 60);
    expect(claim.attempts).toBe(1);

    // Now a real failure: a session holds the job's row and a lock timeout cuts the settlement off.
    const blocker = await db.pool.connect();
    const impatient = createPool(db.url, { max: 2 });
    impatient.on('connect', (client) => void client.query('set lock_timeout = 150').catch(() => {}));
    try {
      await blocker.query('begin');
      await blocker.query('select 1 from jobs where id = $1 for update', [job.id]);
      const outcome = await settleEvent(impatient, claim);
      expect(outcome.kind).toBe('retry');
    } finally {
      await blocker.query('rollback');
      blocker.release();
      await impatient.end();
    }
    const row = (await db.pool.query(`select state, attempts, last_error from webhook_events where event_key = $1`, [eventKey])).rows[0];
    expect(row).toMatchObject({ state: 'pending', attempts: 1, last_error: expect.stringMatching(/lock timeout/) });
    await db.pool.query(`update webhook_events set run_after = now() where event_key = $1`, [eventKey]);
    expect(await settleEvent(db.pool, await claimOne(eventKey, 60))).toMatchObject({ kind: 'settled', result: { outcome: 'applied' } });
  });

  it('a claim lost to another worker whose settlement fails reports the loss: nothing retried, nothing dead-lettered', async () => {
    const { eventKey } = await pendingCompletion(); // a completion without usage: a permanent error
    const lost = await claimOne(eventKey, 0.2);
    await leaseLapsed(eventKey);
    const owner = await claimOne(eventKey, 60);
    expect(owner.fencing_token).toBeGreaterThan(lost.fencing_token);

    expect(await settleEvent(db.pool, lost)).toEqual({ kind: 'lease_lost' });
    const row = (await db.pool.query(`select state, attempts, fencing_token, last_error from webhook_events where event_key = $1`, [eventKey])).rows[0];
    expect(row).toMatchObject({ state: 'processing', attempts: 1, fencing_token: owner.fencing_token, last_error: null });

    // The owner's own failure is real, and dead-letters as a permanent error should.
    expect((await settleEvent(db.pool, owner)).kind).toBe('dead');
  });
});
