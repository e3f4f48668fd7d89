import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { assertLedgerInvariants } from '../support/invariants.js';
import { STRIPE_SECRET, checkout, eventsSettled, grantRow, paymentsStack } from '../support/payments.js';
import { autoRecharge, payingWorld } from '../support/paying-world.js';
import { waitUntil } from '../support/server.js';
import { createWorld, submitJob } from '../support/world.js';

/**
 * Checkout top-ups and auto-recharge (CONTRACT.md "Payments (Stripe)"), on real
 * PostgreSQL with the real app, the payments worker and the local Stripe.
 */
const stack = await paymentsStack();
afterEach(async () => {
  await stack.stopWorkers();
  await assertLedgerInvariants(stack.db.pool);
});

const q = async <T extends object = any>(sql: string, values: unknown[] = []) => (await stack.db.pool.query<T>(sql, values)).rows;

describe('Checkout top-ups', () => {
  it('makes the grant, the tenant’s customer once and one session with the contract’s parameters; a retry replays it', async () => {
    const world = await createWorld(stack.admin, { credit: '0' });
    const payer = { tenantId: world.tenantId, tenant: world.tenant, walletId: world.walletId };
    const key = randomUUID();
    const first = await checkout(payer, '12.34', key);
    const again = await payer.tenant.post(
      `/v1/wallets/${payer.walletId}/checkout-sessions`,
      { amount: '12.34', success_url: 'https://example.com/ok', cancel_url: 'https://example.com/cancel' },
      { 'idempotency-key': key },
    );
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const reused = await payer.tenant.post(
      `/v1/wallets/${payer.walletId}/checkout-sessions`,
      { amount: '99.00', success_url: 'https://example.com/ok', cancel_url: 'https://example.com/cancel' },
      { 'idempotency-key': key },
    );
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
    await checkout(payer, '5.00');
    const sessions = stack.stripe.requests.filter(
      (r) => r.path === '/v1/checkout/sessions' && (r.params.metadata as any)?.tally_wallet_id === payer.walletId,
    );
    expect(sessions).toHaveLength(2);
    const params = sessions[0]!.params as any;
    expect(params).toMatchObject({
      mode: 'payment',
      client_reference_id: first.grant_id,
      line_items: [{ quantity: '1', price_data: { currency: 'usd', unit_amount: '1234' } }],
      metadata: { tally_grant_id: first.grant_id, tally_wallet_id: payer.walletId },
      payment_intent_data: {
        metadata: { tally_grant_id: first.grant_id, tally_wallet_id: payer.walletId },
        setup_future_usage: 'off_session',
      },
    });
    expect(sessions[0]!.idempotencyKey).toContain(first.grant_id);
    const customers = stack.stripe.requests.filter(
      (r) => r.path === '/v1/customers' && (r.params.metadata as any)?.tally_tenant_id === payer.tenantId,
    );
    expect(customers).toHaveLength(1);
    expect(customers[0]!.idempotencyKey).toContain(payer.tenantId);
    expect(await grantRow(stack.db.pool, first.grant_id)).toMatchObject({
      status: 'awaiting_payment',
      source: 'stripe_checkout',
      amount: 12_340_000n,
    });
    const fraction = await payer.tenant.post(
      `/v1/wallets/${payer.walletId}/checkout-sessions`,
      { amount: '1.005', success_url: 'https://example.com/ok', cancel_url: 'https://example.com/cancel' },
      { 'idempotency-key': randomUUID() },
    );
    expect(fraction.status).toBe(400);
    expect(fraction.body.error.code).toBe('invalid_amount');
  });

  it('completes a checkout cut between the grant and the session by a retry that makes no second session', async () => {
    const world = await createWorld(stack.admin, { credit: '0' });
    const payer = { tenantId: world.tenantId, tenant: world.tenant, walletId: world.walletId };
    const key = randomUUID();
    const body = { amount: '20.00', success_url: 'https://example.com/ok', cancel_url: 'https://example.com/cancel' };
    stack.stripe.failNext(1, /^\/v1\/checkout\/sessions$/);
    const failed = await payer.tenant.post(`/v1/wallets/${payer.walletId}/checkout-sessions`, body, { 'idempotency-key': key });
    expect(failed.status).toBe(503);
    // Stripe made the session but its answer was lost
    // (twice: Stripe's SDK itself retries a closed connection once, with the same key)
    stack.stripe.dropAfterCommitNext(2, /^\/v1\/checkout\/sessions$/);
    const dropped = await payer.tenant.post(`/v1/wallets/${payer.walletId}/checkout-sessions`, body, { 'idempotency-key': key });
    expect(dropped.status).toBe(503);
    const done = await payer.tenant.post(`/v1/wallets/${payer.walletId}/checkout-sessions`, body, { 'idempotency-key': key });
    expect(done.status).toBe(201);
    const made = [...stack.stripe.sessions.values()].filter((s) => (s.metadata as any).tally_wallet_id === payer.walletId);
    expect(made).toHaveLength(1);
    expect(done.body.id).toBe(made[0]!.id);
    expect(await q('select count(*)::int as n from grants where wallet_id = $1', [payer.walletId])).toEqual([{ n: 1 }]);
  });
});

describe('auto-recharge', () => {
  it('decides one recharge for 20 concurrent reservations crossing the threshold, charged once with the grant’s key', async () => {
    const { world, payer } = await payingWorld(stack, '10.00');
    expect(await autoRecharge(payer, { enabled: true, threshold: '9.70', target: '20.00' })).toMatchObject({
      enabled: true,
      in_flight: false,
    });
    const jobs = await Promise.all(Array.from({ length: 20 }, () => submitJob(world)));
    expect(jobs).toHaveLength(20);
    const recharges = await q<{ id: string; amount: bigint }>(
      `select id, amount from grants where wallet_id = $1 and source = 'auto_recharge'`,
      [payer.walletId],
    );
    expect(recharges).toHaveLength(1);
    // decided by the reservation that took available from 9.70 to 9.68: 20.00 − 9.68
    expect(recharges[0]!.amount).toBe(10_320_000n);
    expect((await payer.tenant.get(`/v1/wallets/${payer.walletId}/auto-recharge`)).body.in_flight).toBe(true);
    await stack.startWorkers(2);
    await waitUntil(async () => (await grantRow(stack.db.pool, recharges[0]!.id)).status === 'active');
    const intents = [...stack.stripe.paymentIntents.values()].filter((pi) => (pi.metadata as any).tally_grant_id === recharges[0]!.id);
    expect(intents).toHaveLength(1);
    expect(intents[0]).toMatchObject({ amount: 1032, currency: 'usd', status: 'succeeded' });
    const call = stack.stripe.requests.find(
      (r) => r.path === '/v1/payment_intents' && (r.params.metadata as any)?.tally_grant_id === recharges[0]!.id,
    )!;
    expect(call.params).toMatchObject({ off_session: 'true', confirm: 'true', amount: '1032', currency: 'usd' });
    expect(call.idempotencyKey).toContain(recharges[0]!.id);
    await eventsSettled(stack.db.pool); // its payment_intent.succeeded changes nothing more
    expect(
      await q(`select count(*)::int as n from ledger_entries where grant_id = $1 and entry_type = 'grant'`, [recharges[0]!.id]),
    ).toEqual([{ n: 1 }]);
    expect((await payer.tenant.get(`/v1/wallets/${payer.walletId}/auto-recharge`)).body).toMatchObject({
      in_flight: false,
      consecutive_failures: 0,
    });
  });

  it('stays within the monthly limit, counting what is in flight', async () => {
    const { world, payer } = await payingWorld(stack, '10.00');
    await autoRecharge(payer, { enabled: true, threshold: '9.99', target: '30.00', monthly_limit: '15.00' });
    await submitJob(world);
    const recharges = await q<{ amount: bigint }>(`select amount from grants where wallet_id = $1 and source = 'auto_recharge'`, [
      payer.walletId,
    ]);
    expect(recharges).toEqual([{ amount: 15_000_000n }]);
  });

  it('disables itself after three declined recharges and sends auto_recharge.disabled once', async () => {
    const { world, payer } = await payingWorld(stack, '10.00');
    // an endpoint of the tenant's, so its messages are written (none is delivered here)
    await stack.db.pool.query(
      `insert into webhook_endpoints (id, tenant_id, url, events, secret) values ($1, $2, 'https://example.com/hook', '{*}', 'whsec_dGVzdA==')`,
      [randomUUID(), payer.tenantId],
    );
    const card = (
      await q<{ payment_method: string }>('select payment_method from stripe_customers where tenant_id = $1', [payer.tenantId])
    )[0]!.payment_method;
    stack.stripe.cards.set(card, 'decline');
    // each decline is told twice: Stripe's answer to the call and its payment_intent.payment_failed event
    stack.stripe.deliverTo({ url: stack.url, secret: STRIPE_SECRET });
    onTestFinished(() => stack.stripe.deliverTo(null));
    await autoRecharge(payer, { enabled: true, threshold: '9.99', target: '20.00' });
    await stack.startWorkers(1);
    for (let attempt = 1; attempt <= 4; attempt++) {
      await submitJob(world);
      await waitUntil(
        async () =>
          (
            await q(
              `select 1 from grants where wallet_id = $1 and source = 'auto_recharge' and activated_at is null and canceled_at is null`,
              [payer.walletId],
            )
          ).length === 0,
      );
      await eventsSettled(stack.db.pool);
      const state = (await payer.tenant.get(`/v1/wallets/${payer.walletId}/auto-recharge`)).body;
      expect(state).toMatchObject({ consecutive_failures: Math.min(attempt, 3), enabled: attempt < 3, in_flight: false });
    }
    const recharges = await q(`select canceled_at is not null as canceled from grants where wallet_id = $1 and source = 'auto_recharge'`, [
      payer.walletId,
    ]);
    expect(recharges).toEqual([{ canceled: true }, { canceled: true }, { canceled: true }]);
    expect(
      await q(`select count(*)::int as n from outbound_messages where tenant_id = $1 and type = 'auto_recharge.disabled'`, [
        payer.tenantId,
      ]),
    ).toEqual([{ n: 1 }]);
    expect(
      await q(`select count(*)::int as n from outbound_messages where tenant_id = $1 and type = 'payment.failed'`, [payer.tenantId]),
    ).toEqual([{ n: 3 }]);
    await eventsSettled(stack.db.pool);
    const told = await q<{ state: string }>(
      `select state from stripe_events where type = 'payment_intent.payment_failed' and convert_from(payload, 'UTF8') like $1`,
      [`%${payer.walletId}%`],
    );
    expect(told).toHaveLength(3);
    expect(told.every((e) => e.state === 'no_effect' || e.state === 'applied')).toBe(true);
    expect((await payer.tenant.get(`/v1/wallets/${payer.walletId}/auto-recharge`)).body.disabled_reason).toMatch(
      /3 recharges in a row failed/,
    );
    // enabling again resets the count and recharges at the next posting below the threshold
    stack.stripe.cards.set(card, 'succeed');
    expect(await autoRecharge(payer, { enabled: true, threshold: '9.99', target: '20.00' })).toMatchObject({
      enabled: true,
      consecutive_failures: 0,
      disabled_reason: null,
    });
    await submitJob(world);
    await waitUntil(
      async () =>
        (await q(`select 1 from grants where wallet_id = $1 and source = 'auto_recharge' and activated_at is not null`, [payer.walletId]))
          .length === 1,
    );
  });
});

describe('reconciliation of payments', () => {
  it('finds payment_mismatch, payment_event_stuck and recharge_unresolved, each once per object', async () => {
    const { findInconsistencies } = await import('../../src/reconcile/checks.js');
    const { stripeEvent } = await import('../../src/simulator/stripe/index.js');
    const { world, payer } = await payingWorld(stack, '10.00');
    // a payment of another amount than its grant's
    const session = await checkout(payer, '7.00');
    const pi = `pi_${randomUUID().replaceAll('-', '')}`;
    await stack.send(
      stripeEvent(
        'payment_intent.succeeded',
        { id: pi, object: 'payment_intent', amount_received: 600, currency: 'usd', metadata: { tally_grant_id: session.grant_id } },
        `evt_${randomUUID()}`,
      ),
    );
    // a refund of a payment never seen, waiting
    const stuck = stripeEvent(
      'refund.created',
      {
        id: `re_${pi}`,
        object: 'refund',
        amount: 100,
        currency: 'usd',
        status: 'succeeded',
        payment_intent: `pi_never_${pi}`,
        charge: null,
      },
      `evt_${randomUUID()}`,
    );
    await stack.send(stuck);
    await stack.startWorkers(1);
    await waitUntil(async () => (await q(`select 1 from stripe_payments where payment_intent = $1`, [pi])).length === 1);
    await waitUntil(
      async () => (await q(`select 1 from stripe_events where id = $1 and waiting_since is not null`, [stuck.id])).length === 1,
    );
    await stack.stopWorkers();
    // a recharge decided, never charged (no worker), an hour ago
    await autoRecharge(payer, { enabled: true, threshold: '9.99', target: '20.00' });
    await submitJob(world);
    const [recharge] = await q<{ id: string }>(`select id from grants where wallet_id = $1 and source = 'auto_recharge'`, [payer.walletId]);
    await stack.db.pool.query(`update stripe_events set received_at = now() - interval '6 minutes' where id = $1`, [stuck.id]);
    await stack.db.pool.query(`update grants set created_at = now() - interval '61 minutes' where id = $1`, [recharge!.id]);
    const classes = ['payment_mismatch', 'payment_event_stuck', 'recharge_unresolved'] as const;
    const found = (await findInconsistencies(stack.db.pool, classes)).filter(
      (f) => f.objects.payment_intent === pi || f.objects.event_id === stuck.id || f.objects.grant_id === recharge!.id,
    );
    expect(found.map((f) => f.class).sort()).toEqual([...classes].sort());
    expect(found.find((f) => f.class === 'payment_mismatch')!.detail).toMatchObject({ paid_minor: 600, grant_amount: '7.000000' });
    expect(found.find((f) => f.class === 'payment_event_stuck')!.detail.reason).toMatch(/^waiting_for_payment/);
    // cleaned up for the other tests of the file: nobody will pay these
    await stack.db.pool.query(`update stripe_events set state = 'no_effect' where id = $1`, [stuck.id]);
    await stack.db.pool.query(`update stripe_calls set state = 'dead' where grant_id = $1`, [recharge!.id]);
  });
});

describe('a refund of credit already spent', () => {
  it('takes what the grant has left and the rest as debt: wallet_overdrawn and wallet.overdrawn', async () => {
    const { Worker } = await import('../../src/worker/worker.js');
    const { runDueDuties } = await import('../../src/duties/duties.js');
    const { providerEvent, send, settledJob } = await import('../support/jobs.js');
    const { world, payer, session } = await payingWorld(stack, '10.00');
    await stack.db.pool.query(
      `insert into webhook_endpoints (id, tenant_id, url, events, secret) values ($1, $2, 'https://example.com/hook', '{*}', 'whsec_dGVzdA==')`,
      [randomUUID(), payer.tenantId],
    );
    const settler = new Worker(stack.db.pool, {
      concurrency: 1,
      leaseSeconds: 30,
      pollIntervalMs: 50,
      dutyIntervalMs: 60_000,
      duties: runDueDuties,
      databaseUrl: stack.db.url,
      log: { info: () => {}, warn: () => {}, error: () => {} } as never,
    });
    await settler.start();
    try {
      const job = await submitJob(world);
      await send(
        stack.url,
        world,
        providerEvent(world, job.id, 'job.completed', { usage: { input_tokens: 1000, output_tokens: 500 } }),
        `evt-${randomUUID()}`,
      );
      await settledJob(world, job.id, 'captured'); // 0.002 spent
    } finally {
      await settler.stop();
    }
    const pi = (await grantRow(stack.db.pool, session.grant_id)).payment.payment_intent as string;
    await stack.startWorkers(1);
    for (const event of await stack.stripe.refund(pi, 1000, { send: false })) await stack.send(event);
    await eventsSettled(stack.db.pool);
    const [wallet] = await q<{ balance: bigint; debt: bigint }>(
      `select credits_posted - debits_posted as balance, debt from accounts where id = $1`,
      [payer.walletId],
    );
    expect(wallet).toEqual({ balance: -2_000n, debt: 2_000n });
    expect(await q(`select count(*)::int as n from alerts where tenant_id = $1 and class = 'wallet_overdrawn'`, [payer.tenantId])).toEqual([
      { n: 1 },
    ]);
    expect(
      await q(`select count(*)::int as n from outbound_messages where tenant_id = $1 and type = 'wallet.overdrawn'`, [payer.tenantId]),
    ).toEqual([{ n: 1 }]);
    expect(
      await q(`select count(*)::int as n from outbound_messages where tenant_id = $1 and type = 'payment.refunded'`, [payer.tenantId]),
    ).toEqual([{ n: 1 }]);
  });
});
