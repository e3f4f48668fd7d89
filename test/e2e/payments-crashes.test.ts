import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { LocalStripe } from '../../src/simulator/stripe/index.js';
import { Client } from '../support/client.js';
import { freshDatabase } from '../support/database.js';
import { checkout, grantRow } from '../support/payments.js';
import { runTally, startServer, waitUntil, type TallyProcess } from '../support/server.js';
import { createWorld, submitJob } from '../support/world.js';
import { sendStripeEvent } from '../../src/simulator/stripe/index.js';

/**
 * A recharge's charge survives a SIGKILL of the worker at either side of its call to
 * Stripe (docs/ARCHITECTURE.md, funds/payments/; docs/payments.md: calls to the processor after commit, from an outbox row,
 * with an Idempotency-Key derived from the row): a real `tally serve --workers 0`, real
 * `tally worker` processes killed by their own failpoints, the local Stripe counting
 * payment intents.
 */
const SECRET_KEY = randomBytes(32).toString('hex');
const WEBHOOK_SECRET = 'whsec_Y3Jhc2gtdGVzdC1zdHJpcGUtc2VjcmV0';
const db = await freshDatabase();
const server = await startServer(db.url, { workers: 0, env: { TALLY_SECRET_KEY: SECRET_KEY } });
const admin = new Client(server.url);
const stripe = await LocalStripe.start();
afterAll(() => stripe.close());
expect(
  (
    await admin.request('PUT', '/v1/payment-settings/stripe', {
      api_key: 'sk_test_crash_0000',
      webhook_secrets: [WEBHOOK_SECRET],
      base_url: stripe.url,
    })
  ).status,
).toBe(200);

function startWorker(failpoint?: string): TallyProcess {
  const worker = runTally(['worker', '--concurrency', '1'], {
    DATABASE_URL: db.url,
    TALLY_SECRET_KEY: SECRET_KEY,
    TALLY_FAILPOINTS: failpoint,
    TALLY_POLL_INTERVAL_MS: '100',
    TALLY_LEASE_SECONDS: '3',
  });
  onTestFinished(() => {
    if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
  });
  return worker;
}

/** A tenant whose checkout of 10.00 was paid by card (its worker stopped after), with auto-recharge below 9.99 up to 20.00. */
async function rechargeable() {
  const world = await createWorld(admin, { credit: '0' });
  const payer = { tenantId: world.tenantId, tenant: world.tenant, walletId: world.walletId };
  const session = await checkout(payer, '10.00');
  const settling = startWorker();
  for (const event of await stripe.completeCheckout(session.id, { send: false })) {
    expect((await sendStripeEvent(server.url, event, WEBHOOK_SECRET)).status).toBe(200);
  }
  await waitUntil(async () => (await grantRow(db.pool, session.grant_id)).status === 'active', 30_000);
  await settling.stop('SIGTERM');
  const answer = await world.tenant.request('PUT', `/v1/wallets/${world.walletId}/auto-recharge`, {
    enabled: true,
    threshold: '9.99',
    target: '20.00',
  });
  expect(answer.status).toBe(200);
  return world;
}

async function rechargeOf(walletId: string): Promise<{ id: string }> {
  const rows = await db.pool.query<{ id: string }>(`select id from grants where wallet_id = $1 and source = 'auto_recharge'`, [walletId]);
  expect(rows.rows).toHaveLength(1);
  return rows.rows[0]!;
}

const intentsFor = (grantId: string) =>
  stripe.paymentIntentCount((pi) => (pi.metadata as Record<string, string>).tally_grant_id === grantId);
const callsFor = (grantId: string) =>
  stripe.requests.filter(
    (r) => r.path === '/v1/payment_intents' && (r.params.metadata as Record<string, string> | undefined)?.tally_grant_id === grantId,
  );

describe('a worker killed around its call to Stripe', () => {
  it('between deciding a recharge and calling Stripe: the next worker makes exactly one payment intent', async () => {
    const world = await rechargeable();
    const doomed = startWorker('payments.before_call');
    await submitJob(world); // takes available below 9.99: the recharge is decided in this transaction
    const recharge = await rechargeOf(world.walletId);
    expect(await doomed.exited).toBe('SIGKILL');
    expect(intentsFor(recharge.id)).toBe(0);
    expect((await grantRow(db.pool, recharge.id)).status).toBe('awaiting_payment');
    startWorker();
    await waitUntil(async () => (await grantRow(db.pool, recharge.id)).status === 'active', 30_000);
    expect(intentsFor(recharge.id)).toBe(1);
    expect(callsFor(recharge.id)).toHaveLength(1);
  });

  it('between Stripe answering and Tally recording it: the retry with the same key gets the first payment intent, none more', async () => {
    const world = await rechargeable();
    const doomed = startWorker('payments.after_call');
    await submitJob(world);
    const recharge = await rechargeOf(world.walletId);
    expect(await doomed.exited).toBe('SIGKILL');
    expect(intentsFor(recharge.id)).toBe(1);
    expect((await grantRow(db.pool, recharge.id)).status).toBe('awaiting_payment');
    startWorker();
    await waitUntil(async () => (await grantRow(db.pool, recharge.id)).status === 'active', 30_000);
    expect(intentsFor(recharge.id)).toBe(1);
    const calls = callsFor(recharge.id);
    expect(calls).toHaveLength(2);
    expect(new Set(calls.map((c) => c.idempotencyKey)).size).toBe(1);
    const entries = await db.pool.query(`select count(*)::int as n from ledger_entries where grant_id = $1 and entry_type = 'grant'`, [
      recharge.id,
    ]);
    expect(entries.rows).toEqual([{ n: 1 }]);
  });
});

describe('tally payments sync', () => {
  it('receives the events that never arrived, exactly as if delivered, once', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const payer = { tenantId: world.tenantId, tenant: world.tenant, walletId: world.walletId };
    const session = await checkout(payer, '15.00');
    const since = Math.floor(Date.now() / 1000);
    const events = await stripe.completeCheckout(session.id, { send: false }); // Stripe never reached Tally
    const env = { DATABASE_URL: db.url, TALLY_SECRET_KEY: SECRET_KEY };
    const first = runTally(['payments', 'sync', '--since', String(since), '--json'], env);
    expect(await first.exited, first.output()).toBe(0);
    const report = JSON.parse(first.output());
    expect(report.received).toBeGreaterThanOrEqual(events.length); // (and any other test's undelivered event of that second)
    const stored = await db.pool.query(`select count(*)::int as n from stripe_events where id = any($1) and source = 'sync'`, [
      events.map((e) => e.id),
    ]);
    expect(stored.rows).toEqual([{ n: events.length }]);
    startWorker();
    await waitUntil(async () => (await grantRow(db.pool, session.grant_id)).status === 'active', 30_000);
    const again = runTally(['payments', 'sync', '--json'], env);
    expect(await again.exited, again.output()).toBe(0);
    expect(JSON.parse(again.output())).toMatchObject({ received: 0 });
    // Stripe's own delivery, late, in its bytes: a duplicate, not a conflict
    const late = await sendStripeEvent(server.url, events[0]!, WEBHOOK_SECRET);
    expect(late.body).toEqual({ status: 'already_accepted', event_id: events[0]!.id });
    const entries = await db.pool.query(`select count(*)::int as n from ledger_entries where grant_id = $1`, [session.grant_id]);
    expect(entries.rows).toEqual([{ n: 1 }]);
  });
});

describe('tally payments retry', () => {
  it('queues a dead Stripe event again, and refuses one that is not dead', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const session = await checkout({ tenantId: world.tenantId, tenant: world.tenant, walletId: world.walletId }, '3.00');
    const [completed] = await stripe.completeCheckout(session.id, { send: false });
    expect((await sendStripeEvent(server.url, completed!, WEBHOOK_SECRET)).status).toBe(200);
    await db.pool.query(
      `update stripe_events set state = 'dead', reason = 'dead_lettered', last_error = 'made dead by the test' where id = $1`,
      [completed!.id],
    );
    const env = { DATABASE_URL: db.url, TALLY_SECRET_KEY: SECRET_KEY };
    const retried = runTally(['payments', 'retry', completed!.id], env);
    expect(await retried.exited, retried.output()).toBe(0);
    startWorker();
    await waitUntil(async () => (await grantRow(db.pool, session.grant_id)).status === 'active', 30_000);
    const again = runTally(['payments', 'retry', completed!.id], env);
    expect(await again.exited).toBe(1);
    expect(again.output()).toMatch(/is applied, not dead/);
  });
});
