import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { decideRecharge } from '../../src/funds/payments/recharge-decision.js';
import { stripeEvent } from '../../src/simulator/stripe/index.js';
import { assertLedgerInvariants } from '../support/invariants.js';
import { checkout, eventsSettled, grantRow, paymentTenant, paymentsStack, walletMoney, type PaymentTenant } from '../support/payments.js';
import { autoRecharge, payingWorld } from '../support/paying-world.js';
import { waitUntil } from '../support/server.js';
import { createWorld, submitJob } from '../support/world.js';

/**
 * The edges of payments the outside found (issue 33, CONTRACT.md "Payments (Stripe)",
 * Edges): money taken always lands or is named, a recharge turned off is never charged, a
 * checkout's card is learnt from its session alone, amounts Stripe cannot charge, refunds
 * and disputes in another currency, the balance limit. Real PostgreSQL, the real app, the
 * payments worker and the local Stripe.
 */
const stack = await paymentsStack();
afterEach(async () => {
  await stack.stopWorkers();
  await assertLedgerInvariants(stack.db.pool);
});

const q = async <T extends object = any>(sql: string, values: unknown[] = []) => (await stack.db.pool.query<T>(sql, values)).rows;

async function reconcile(repair = false) {
  const run = await stack.admin.post('/v1/reconciliation/runs', { repair });
  expect(run.status, JSON.stringify(run.body)).toBe(201);
  return run.body as { clean: boolean; exceptions: { class: string; objects: Record<string, unknown>; detail: Record<string, unknown> }[] };
}

const balanceOf = async (payer: PaymentTenant) => (await payer.tenant.get(`/v1/wallets/${payer.walletId}`)).body.balance as string;

describe('money taken always lands', () => {
  it('refuses to void a grant awaiting its payment (409 grant_awaiting_payment); paid, it credits the wallet', async () => {
    const payer = await paymentTenant(stack);
    const session = await checkout(payer, '12.00');
    const refused = await stack.admin.post(`/v1/grants/${session.grant_id}/void`, { note: 'test' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('grant_awaiting_payment');
    expect(await grantRow(stack.db.pool, session.grant_id)).toMatchObject({ status: 'awaiting_payment' });
    await stack.startWorkers(1);
    for (const event of await stack.stripe.completeCheckout(session.id, { send: false })) await stack.send(event);
    await eventsSettled(stack.db.pool);
    expect(await balanceOf(payer)).toBe('12.000000');
    // once paid it can be voided like any grant
    expect((await stack.admin.post(`/v1/grants/${session.grant_id}/void`, { note: 'test' })).status).toBe(200);
  });

  it('credits a payment whose grant was voided before it came on a grant of its own; its refund then posts', async () => {
    const payer = await paymentTenant(stack);
    const session = await checkout(payer, '20.00');
    // voided as the API allowed before the fix (and as a canceled checkout still may be)
    await q(`update grants set voided_at = now(), void_note = 'voided while awaiting' where id = $1`, [session.grant_id]);
    await stack.startWorkers(1);
    const events = await stack.stripe.completeCheckout(session.id, { send: false });
    for (const event of events) await stack.send(event);
    await eventsSettled(stack.db.pool);
    expect(await balanceOf(payer)).toBe('20.000000');
    const [payment] = await q<{ grant_id: string; outcome: string; payment_intent: string }>(
      `select grant_id, outcome, payment_intent from stripe_payments where wallet_id = $1`,
      [payer.walletId],
    );
    expect(payment!.outcome).toBe('activated');
    expect(payment!.grant_id).not.toBe(session.grant_id);
    expect(await grantRow(stack.db.pool, payment!.grant_id)).toMatchObject({
      status: 'active',
      source: 'stripe_payment',
      amount: 20_000_000n,
    });
    for (const event of await stack.stripe.refund(payment!.payment_intent, 500, { send: false })) await stack.send(event);
    await eventsSettled(stack.db.pool);
    expect(await q(`select state from stripe_events where type = 'refund.created' and object_id like 're_%' and state = 'dead'`)).toEqual(
      [],
    );
    expect(await balanceOf(payer)).toBe('15.000000');
    expect((await reconcile()).exceptions.filter((e) => e.objects.wallet_id === payer.walletId)).toEqual([]);
  });

  it('finds a payment recorded as applied whose voided grant never took it (payment_not_credited); --repair credits it once', async () => {
    const payer = await paymentTenant(stack);
    const session = await checkout(payer, '7.00');
    // what the code before the fix left behind: the grant voided, its payment recorded activated, nothing credited
    await q(`update grants set voided_at = now(), void_note = 'before the fix' where id = $1`, [session.grant_id]);
    const pi = `pi_${randomUUID().replaceAll('-', '')}`;
    await q(
      `insert into stripe_payments (payment_intent, outcome, grant_id, tenant_id, wallet_id, charge_id, amount_minor, currency)
       values ($1, 'activated', $2, $3, $4, null, 700, 'usd')`,
      [pi, session.grant_id, payer.tenantId, payer.walletId],
    );
    const found = (await reconcile()).exceptions.filter((e) => e.class === 'payment_not_credited' && e.objects.payment_intent === pi);
    expect(found).toHaveLength(1);
    expect(found[0]!.objects).toMatchObject({ grant_id: session.grant_id, wallet_id: payer.walletId });
    await reconcile(true);
    expect(await balanceOf(payer)).toBe('7.000000');
    await reconcile(true);
    expect(await balanceOf(payer)).toBe('7.000000');
    const after = await reconcile();
    expect(after.exceptions.filter((e) => e.class === 'payment_not_credited' && e.objects.payment_intent === pi)).toEqual([]);
    expect(await q(`select count(*)::int as n from grants where grant_key = $1`, [`stripe_payment:${pi}`])).toEqual([{ n: 1 }]);
  });

  it('a recharge grant voided while in flight no longer counts as in flight', async () => {
    const { world, payer } = await payingWorld(stack, '10.00');
    await autoRecharge(payer, { enabled: true, threshold: '9.99', target: '20.00' });
    await submitJob(world);
    const [recharge] = await q<{ id: string }>(`select id from grants where wallet_id = $1 and source = 'auto_recharge'`, [payer.walletId]);
    expect((await payer.tenant.get(`/v1/wallets/${payer.walletId}/auto-recharge`)).body.in_flight).toBe(true);
    await q(`update grants set voided_at = now(), void_note = 'before the fix' where id = $1`, [recharge!.id]);
    expect((await payer.tenant.get(`/v1/wallets/${payer.walletId}/auto-recharge`)).body.in_flight).toBe(false);
    await submitJob(world);
    expect(await q(`select count(*)::int as n from grants where wallet_id = $1 and source = 'auto_recharge'`, [payer.walletId])).toEqual([
      { n: 2 },
    ]);
  });
});

describe('auto-recharge turned off', () => {
  it('cancels a recharge that Stripe has not accepted yet before its next attempt, instead of charging the card', async () => {
    const { world, payer } = await payingWorld(stack, '10.00');
    await autoRecharge(payer, { enabled: true, threshold: '9.99', target: '20.00' });
    stack.stripe.failNext(1, /^\/v1\/payment_intents$/, 503);
    await submitJob(world);
    const [recharge] = await q<{ id: string }>(`select id from grants where wallet_id = $1 and source = 'auto_recharge'`, [payer.walletId]);
    await stack.startWorkers(1);
    await waitUntil(async () => (await q(`select 1 from stripe_calls where grant_id = $1 and attempts >= 1`, [recharge!.id])).length === 1);
    await autoRecharge(payer, { enabled: false, threshold: '9.99', target: '20.00' });
    await waitUntil(
      async () => (await q(`select 1 from stripe_calls where grant_id = $1 and state = 'done'`, [recharge!.id])).length === 1,
    );
    expect(await q(`select outcome, last_error from stripe_calls where grant_id = $1`, [recharge!.id])).toEqual([
      { outcome: 'canceled', last_error: 'auto_recharge_disabled' },
    ]);
    expect(await grantRow(stack.db.pool, recharge!.id)).toMatchObject({ status: 'canceled' });
    expect(stack.stripe.paymentIntentCount((pi) => (pi.metadata as any)?.tally_grant_id === recharge!.id)).toBe(0);
    const view = (await payer.tenant.get(`/v1/wallets/${payer.walletId}/auto-recharge`)).body;
    expect(view).toMatchObject({ in_flight: false, consecutive_failures: 0 });
  });
});

describe('the card of a checkout', () => {
  it('is learnt when only checkout.session.completed is delivered, and the next recharge is made', async () => {
    const world = await createWorld(stack.admin, { credit: '0' });
    const payer: PaymentTenant = { tenantId: world.tenantId, tenant: world.tenant, walletId: world.walletId };
    await autoRecharge(payer, { enabled: true, threshold: '9.99', target: '20.00' });
    expect((await payer.tenant.get(`/v1/wallets/${payer.walletId}/auto-recharge`)).body.blocked_reason).toBe('no_payment_method');
    const session = await checkout(payer, '10.00');
    const events = await stack.stripe.completeCheckout(session.id, { send: false, paymentMethod: 'pm_card_mastercard' });
    await stack.startWorkers(1);
    await stack.send(events.find((e) => e.type === 'checkout.session.completed')!);
    await eventsSettled(stack.db.pool);
    expect(await q(`select payment_method from stripe_customers where tenant_id = $1`, [payer.tenantId])).toEqual([
      { payment_method: 'pm_card_mastercard' },
    ]);
    expect((await payer.tenant.get(`/v1/wallets/${payer.walletId}/auto-recharge`)).body.blocked_reason).toBeNull();
    await submitJob(world);
    const [recharge] = await q<{ id: string }>(`select id from grants where wallet_id = $1 and source = 'auto_recharge'`, [payer.walletId]);
    expect(recharge).toBeDefined();
    await waitUntil(async () => (await grantRow(stack.db.pool, recharge!.id)).status === 'active');
  });

  it('says why a recharge cannot be made: the monthly limit', async () => {
    const { payer } = await payingWorld(stack, '10.00');
    expect(await autoRecharge(payer, { enabled: true, threshold: '5.00', target: '20.00', monthly_limit: '0.10' })).toMatchObject({
      blocked_reason: 'monthly_limit',
    });
    expect(await autoRecharge(payer, { enabled: false, threshold: '5.00', target: '20.00' })).toMatchObject({ blocked_reason: null });
  });
});

describe('amounts Stripe can charge', () => {
  it('refuses a KWD or ISK checkout amount Stripe cannot charge (400 invalid_amount) and sends KWD 5.120 as 5120', async () => {
    const kwd = await paymentTenant(stack, 'KWD');
    const body = { success_url: 'https://example.com/ok', cancel_url: 'https://example.com/cancel' };
    const odd = await kwd.tenant.post(
      `/v1/wallets/${kwd.walletId}/checkout-sessions`,
      { ...body, amount: '5.125' },
      { 'idempotency-key': randomUUID() },
    );
    expect(odd.status).toBe(400);
    expect(odd.body.error.code).toBe('invalid_amount');
    const even = await checkout(kwd, '5.120');
    const sent = stack.stripe.requests.find(
      (r) => r.path === '/v1/checkout/sessions' && (r.params.metadata as any)?.tally_grant_id === even.grant_id,
    )!;
    expect((sent.params.line_items as any)[0].price_data.unit_amount).toBe('5120');
    const isk = await paymentTenant(stack, 'ISK');
    const fraction = await isk.tenant.post(
      `/v1/wallets/${isk.walletId}/checkout-sessions`,
      { ...body, amount: '500.50' },
      { 'idempotency-key': randomUUID() },
    );
    expect(fraction.status).toBe(400);
    expect(fraction.body.error.code).toBe('invalid_amount');
    const whole = await checkout(isk, '500');
    const iskSent = stack.stripe.requests.find(
      (r) => r.path === '/v1/checkout/sessions' && (r.params.metadata as any)?.tally_grant_id === whole.grant_id,
    )!;
    expect((iskSent.params.line_items as any)[0].price_data.unit_amount).toBe('50000');
  });

  it('disables Adaptive Pricing on the Checkout Session (the grant takes only its wallet’s currency)', async () => {
    const payer = await paymentTenant(stack);
    const session = await checkout(payer, '3.00');
    const sent = stack.stripe.requests.find(
      (r) => r.path === '/v1/checkout/sessions' && (r.params.metadata as any)?.tally_grant_id === session.grant_id,
    )!;
    expect(sent.params.adaptive_pricing).toEqual({ enabled: 'false' });
  });

  it('rounds a recharge up to a chargeable amount: KWD in tens of fils, ISK in whole krónur', () => {
    const base = { enabled: true, monthlyLimit: null, inFlight: false, monthTotal: 0n, chargeable: true };
    const kwd = decideRecharge({ ...base, currency: 'KWD', threshold: 45_000_000n, target: 50_000_000n, available: 44_115_000n });
    expect(kwd).toEqual({ kind: 'recharge', amount: 5_890_000n, amountMinor: 5890n });
    const isk = decideRecharge({ ...base, currency: 'ISK', threshold: 45_000_000n, target: 50_000_000n, available: 44_500_000n });
    expect(isk).toEqual({ kind: 'recharge', amount: 6_000_000n, amountMinor: 600n });
  });

  it('cancels the grant of a checkout Stripe refuses for good, and a retry under its key says so', async () => {
    const payer = await paymentTenant(stack);
    const key = randomUUID();
    const body = { amount: '4.00', success_url: 'https://example.com/ok', cancel_url: 'https://example.com/cancel' };
    stack.stripe.failNext(1, /^\/v1\/checkout\/sessions$/, 400);
    const refused = await payer.tenant.post(`/v1/wallets/${payer.walletId}/checkout-sessions`, body, { 'idempotency-key': key });
    expect(refused.status).toBe(502);
    const [grant] = await q<{ id: string }>(`select id from grants where wallet_id = $1`, [payer.walletId]);
    expect(await grantRow(stack.db.pool, grant!.id)).toMatchObject({ status: 'canceled' });
    const again = await payer.tenant.post(`/v1/wallets/${payer.walletId}/checkout-sessions`, body, { 'idempotency-key': key });
    expect(again.status).toBe(502);
    expect(again.body.error.code).toBe('payment_processor_error');
  });
});

describe('refunds and disputes in another currency, and the balance limit', () => {
  it('posts nothing for a JPY refund or dispute of a USD payment and names it (payment_mismatch)', async () => {
    const { payer } = await payingWorld(stack, '10.00');
    const [payment] = await q<{ payment_intent: string; charge_id: string }>(
      `select payment_intent, charge_id from stripe_payments where wallet_id = $1`,
      [payer.walletId],
    );
    await stack.startWorkers(1);
    const refundId = `re_${randomUUID().replaceAll('-', '')}`;
    const refund = {
      id: refundId,
      object: 'refund',
      amount: 1000,
      currency: 'jpy',
      status: 'succeeded',
      payment_intent: payment!.payment_intent,
      charge: payment!.charge_id,
    };
    expect((await stack.send(stripeEvent('refund.created', refund, `evt_${randomUUID()}`))).status).toBe(200);
    const disputeId = `dp_${randomUUID().replaceAll('-', '')}`;
    const dispute = {
      id: disputeId,
      object: 'dispute',
      amount: 1000,
      currency: 'jpy',
      status: 'needs_response',
      payment_intent: payment!.payment_intent,
      charge: payment!.charge_id,
    };
    expect((await stack.send(stripeEvent('charge.dispute.created', dispute, `evt_${randomUUID()}`))).status).toBe(200);
    await eventsSettled(stack.db.pool);
    expect(await balanceOf(payer)).toBe('10.000000');
    expect((await payer.tenant.get(`/v1/wallets/${payer.walletId}/grants`)).body.data[0].status).toBe('active');
    const mismatches = (await reconcile()).exceptions.filter(
      (e) => e.class === 'payment_mismatch' && e.objects.payment_intent === payment!.payment_intent,
    );
    expect(mismatches.map((e) => e.objects.refund ?? e.objects.dispute).sort()).toEqual([disputeId, refundId].sort());
  });

  it('records a payment the wallet cannot hold (past the 10^12 balance limit) as payment_mismatch, crediting nothing', async () => {
    const payer = await paymentTenant(stack);
    const credit = await stack.admin.post(
      `/v1/wallets/${payer.walletId}/credits`,
      { amount: '999999999999.00' },
      { 'idempotency-key': randomUUID() },
    );
    expect(credit.status).toBe(201);
    await stack.startWorkers(1);
    const pi = `pi_${randomUUID().replaceAll('-', '')}`;
    const intent = {
      id: pi,
      object: 'payment_intent',
      amount: 5000,
      amount_received: 5000,
      currency: 'usd',
      status: 'succeeded',
      metadata: { tally_wallet_id: payer.walletId },
    };
    expect((await stack.send(stripeEvent('payment_intent.succeeded', intent, `evt_${randomUUID()}`))).status).toBe(200);
    await eventsSettled(stack.db.pool);
    expect(await balanceOf(payer)).toBe('999999999999.000000');
    expect(await q(`select outcome from stripe_payments where payment_intent = $1`, [pi])).toEqual([{ outcome: 'mismatch' }]);
    expect((await reconcile()).exceptions.filter((e) => e.class === 'payment_mismatch' && e.objects.payment_intent === pi)).toHaveLength(1);
    expect((await walletMoney(stack.db.pool, payer.walletId)).balance).toBe(999_999_999_999_000_000n);
  });
});
