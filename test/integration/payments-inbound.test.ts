import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { readWalletFunds } from '../../src/funds/wallet-funds.js';
import { walletTotals } from '../../src/funds/posting/index.js';
import { stripeEvent } from '../../src/simulator/stripe/index.js';
import { assertLedgerInvariants } from '../support/invariants.js';
import {
  STRIPE_SECRET,
  checkout,
  eventState,
  eventsSettled,
  grantRow,
  paymentTenant,
  paymentsStack,
  shuffle,
  walletMoney,
} from '../support/payments.js';

/**
 * Stripe's events in (CONTRACT.md "Payments (Stripe)"), on real PostgreSQL with the real
 * app and the local Stripe: signatures checked by Stripe's SDK (nothing stored when
 * refused), one payment → one grant however its events arrive, refunds and disputes
 * keyed by their ids, in any order.
 */
const stack = await paymentsStack();
await stack.startWorkers(4);
afterEach(async () => {
  await eventsSettled(stack.db.pool);
  await assertLedgerInvariants(stack.db.pool);
});

const count = async (sql: string, values: unknown[] = []) => Number((await stack.db.pool.query<{ n: string }>(sql, values)).rows[0]!.n);
const micros = (major: string) => BigInt(Math.round(Number(major) * 1_000_000));

describe('the webhook door', () => {
  it('refuses a forged, stale or missing signature with 401 and stores nothing', async () => {
    const event = stripeEvent(
      'payment_intent.succeeded',
      { id: 'pi_x', object: 'payment_intent', amount_received: 100, currency: 'usd', metadata: {} },
      `evt_${randomUUID()}`,
    );
    const before = await count('select count(*) as n from stripe_events');
    const forged = await stack.send(event, { secret: 'whsec_bm90LXRoZS1yaWdodC1zZWNyZXQ=' });
    const stale = await stack.send(event, { timestamp: Math.floor(Date.now() / 1000) - 301 });
    const future = await stack.send(event, { timestamp: Math.floor(Date.now() / 1000) + 301 });
    const missing = await fetch(`${stack.url}/v1/payments/stripe/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(event),
    });
    const garbage = await stack.send(event, { signature: 't=1,v1=deadbeef' });
    for (const answer of [forged, stale, future, garbage]) {
      expect(answer.status).toBe(401);
      expect(answer.body.error.code).toBe('invalid_signature');
    }
    expect(missing.status).toBe(401);
    expect(await count('select count(*) as n from stripe_events')).toBe(before);
    expect(await eventState(stack.db.pool, event.id)).toBeNull();
    // within the tolerance it passes
    expect((await stack.send(event, { timestamp: Math.floor(Date.now() / 1000) - 250 })).status).toBe(200);
  });

  it('verifies with every configured secret (rotation) and tells a duplicate from a conflict by the bytes', async () => {
    const second = 'whsec_c2Vjb25kLXNlY3JldC1mb3Itcm90YXRpb24=';
    expect(
      (
        await stack.admin.request('PUT', '/v1/payment-settings/stripe', {
          api_key: 'sk_test_tally_local_0123456789',
          webhook_secrets: [STRIPE_SECRET, second],
          base_url: stack.stripe.url,
        })
      ).status,
    ).toBe(200);
    const event = stripeEvent('customer.created', { id: 'cus_1', object: 'customer' }, `evt_${randomUUID()}`);
    expect((await stack.send(event, { secret: second })).body).toEqual({ status: 'accepted', event_id: event.id });
    expect((await stack.send(event)).body).toEqual({ status: 'already_accepted', event_id: event.id });
    const other = await stack.send({ ...event, data: { object: { id: 'cus_2', object: 'customer' } } });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('event_key_conflict');
    await eventsSettled(stack.db.pool);
    expect(await eventState(stack.db.pool, event.id)).toEqual({
      state: 'no_effect',
      reason: 'event type customer.created has no effect in Tally',
      conflicts: 1,
    });
    const settings = await stack.admin.get('/v1/payment-settings/stripe');
    expect(settings.body).toMatchObject({ livemode: false, webhook_secrets: 2, api_key_last4: '6789' });
    expect(JSON.stringify(settings.body)).not.toContain('sk_test');
    // write-only and sealed at rest: the database holds no trace of the key
    const stored = await stack.db.pool.query(`select row_to_json(s)::text as row from payment_settings s`);
    expect(stored.rows[0].row).not.toContain('tally_local_0123456789');
  });

  it('refuses an event of the other mode with 400 and keeps it as refused, never applied', async () => {
    const event = {
      ...stripeEvent(
        'payment_intent.succeeded',
        { id: 'pi_live', object: 'payment_intent', amount_received: 100, currency: 'usd', metadata: {} },
        `evt_${randomUUID()}`,
      ),
      livemode: true,
    };
    const answer = await stack.send(event);
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('livemode_mismatch');
    expect((await stack.send(event)).status).toBe(400);
    await new Promise((r) => setTimeout(r, 300));
    expect(await eventState(stack.db.pool, event.id)).toMatchObject({ state: 'refused', reason: 'livemode_mismatch' });
    expect(await count(`select count(*) as n from stripe_payments where payment_intent = 'pi_live'`)).toBe(0);
  });
});

describe('one payment, one grant', () => {
  it('activates one grant when the same payment comes as checkout.session.completed and payment_intent.succeeded, duplicated, in any order, 16 at a time', async () => {
    const payer = await paymentTenant(stack);
    const session = await checkout(payer, '25.00');
    expect((await grantRow(stack.db.pool, session.grant_id)).status).toBe('awaiting_payment');
    const events = await stack.stripe.completeCheckout(session.id, { send: false });
    const [completed, succeeded] = events;
    const deliveries = shuffle([...Array(8).fill(completed), ...Array(8).fill(succeeded), events[2]]);
    const answers = await Promise.all(deliveries.map((e) => stack.send(e)));
    expect(answers.map((a) => a.status)).toEqual(deliveries.map(() => 200));
    expect(answers.filter((a) => a.body.status === 'accepted')).toHaveLength(3);
    await eventsSettled(stack.db.pool);
    const grant = await grantRow(stack.db.pool, session.grant_id);
    expect(grant.status).toBe('active');
    expect(grant.payment).toMatchObject({ payment_intent: succeeded!.data.object.id, checkout_session: session.id });
    const pi = succeeded!.data.object.id as string;
    expect(await count('select count(*) as n from stripe_payments where payment_intent = $1', [pi])).toBe(1);
    expect(await count(`select count(*) as n from grants where wallet_id = $1 and activated_at is not null`, [payer.walletId])).toBe(1);
    expect(await count(`select count(*) as n from ledger_entries where grant_id = $1 and entry_type = 'grant'`, [session.grant_id])).toBe(
      1,
    );
    expect((await walletMoney(stack.db.pool, payer.walletId)).balance).toBe(micros('25.00'));
    const outcomes = [
      (await eventState(stack.db.pool, completed!.id))!.state,
      (await eventState(stack.db.pool, succeeded!.id))!.state,
    ].sort();
    expect(outcomes).toEqual(['applied', 'no_effect']);
    // the checkout's card is kept for recharges
    expect(
      await count('select count(*) as n from stripe_customers where tenant_id = $1 and payment_method is not null', [payer.tenantId]),
    ).toBe(1);
  });

  it('creates one stripe_payment grant of amount_received for a payment naming only a wallet, once', async () => {
    const payer = await paymentTenant(stack);
    const pi = `pi_${randomUUID().replaceAll('-', '')}`;
    const intent = {
      id: pi,
      object: 'payment_intent',
      amount: 1234,
      amount_received: 1234,
      currency: 'usd',
      metadata: { tally_wallet_id: payer.walletId },
      latest_charge: `ch_${pi}`,
    };
    const session = {
      id: `cs_${pi}`,
      object: 'checkout.session',
      amount_total: 1234,
      currency: 'usd',
      payment_intent: pi,
      payment_status: 'paid',
      metadata: { tally_wallet_id: payer.walletId },
    };
    const a = stripeEvent('payment_intent.succeeded', intent, `evt_${randomUUID()}`);
    const b = stripeEvent('checkout.session.completed', session, `evt_${randomUUID()}`);
    await Promise.all([a, b, a, b].map((e) => stack.send(e)));
    await eventsSettled(stack.db.pool);
    const grants = await stack.db.pool.query<{ source: string; amount: bigint }>(
      'select source, amount from grants where wallet_id = $1 and activated_at is not null',
      [payer.walletId],
    );
    expect(grants.rows).toEqual([{ source: 'stripe_payment', amount: 12_340_000n }]);
  });

  it('keeps the grant unpaid when the paid amount is not the grant’s, and records the mismatch', async () => {
    const payer = await paymentTenant(stack);
    const session = await checkout(payer, '10.00');
    const pi = `pi_${randomUUID().replaceAll('-', '')}`;
    const intent = {
      id: pi,
      object: 'payment_intent',
      amount_received: 999,
      currency: 'usd',
      metadata: { tally_grant_id: session.grant_id, tally_wallet_id: payer.walletId },
    };
    await stack.send(stripeEvent('payment_intent.succeeded', intent, `evt_${randomUUID()}`));
    await eventsSettled(stack.db.pool);
    expect((await grantRow(stack.db.pool, session.grant_id)).status).toBe('awaiting_payment');
    const row = await stack.db.pool.query('select outcome, detail from stripe_payments where payment_intent = $1', [pi]);
    expect(row.rows[0]).toMatchObject({ outcome: 'mismatch', detail: 'paid 9.990000 USD, the grant is 10.000000' });
  });

  it('cancels the awaiting grant when its session expires; a success after that still credits it', async () => {
    const payer = await paymentTenant(stack);
    const session = await checkout(payer, '5.00');
    await stack.send((await stack.stripe.expireCheckout(session.id, { send: false }))[0]!);
    await eventsSettled(stack.db.pool);
    expect((await grantRow(stack.db.pool, session.grant_id)).status).toBe('canceled');
    const events = await stack.stripe.completeCheckout(session.id, { send: false });
    await stack.send(events[1]!);
    await eventsSettled(stack.db.pool);
    expect((await grantRow(stack.db.pool, session.grant_id)).status).toBe('active');
  });

  it('answers an unknown type 200 and records it without effect', async () => {
    const event = stripeEvent('invoice.paid', { id: 'in_1', object: 'invoice' }, `evt_${randomUUID()}`);
    expect((await stack.send(event)).status).toBe(200);
    await eventsSettled(stack.db.pool);
    expect(await eventState(stack.db.pool, event.id)).toMatchObject({ state: 'no_effect' });
  });
});

describe('refunds and disputes', () => {
  async function paid(amount: string) {
    const payer = await paymentTenant(stack);
    const session = await checkout(payer, amount);
    const events = await stack.stripe.completeCheckout(session.id, { send: false });
    return { payer, session, events, pi: events[1]!.data.object.id as string };
  }

  it('posts a refund that arrives before the payment once the payment is seen, once', async () => {
    const { payer, session, events, pi } = await paid('30.00');
    const refund = await stack.stripe.refund(pi, 1000, { send: false });
    for (const e of refund) expect((await stack.send(e)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    const waiting = await eventState(stack.db.pool, refund[0]!.id);
    expect(waiting!.state).toBe('pending');
    expect(waiting!.reason).toMatch(/^waiting_for_payment/);
    for (const e of events) await stack.send(e);
    await eventsSettled(stack.db.pool);
    for (const e of refund) await stack.send(e); // duplicates
    await eventsSettled(stack.db.pool);
    const refunds = await stack.db.pool.query(
      `select entry_type, amount from ledger_entries where grant_id = $1 and entry_type = 'refund'`,
      [session.grant_id],
    );
    expect(refunds.rows).toEqual([{ entry_type: 'refund', amount: 10_000_000n }]);
    expect((await walletMoney(stack.db.pool, payer.walletId)).balance).toBe(20_000_000n);
    expect((await grantRow(stack.db.pool, session.grant_id)).payment.refunds).toHaveLength(1);
  });

  it('posts two partial refunds once each (however often each is told), and credits a failed one back once', async () => {
    const { payer, session, events, pi } = await paid('40.00');
    for (const e of events) await stack.send(e);
    await eventsSettled(stack.db.pool);
    const first = await stack.stripe.refund(pi, 500, { send: false });
    const second = await stack.stripe.refund(pi, 700, { send: false });
    await Promise.all(shuffle([...first, ...second, ...first, ...second]).map((e) => stack.send(e)));
    await eventsSettled(stack.db.pool);
    expect((await walletMoney(stack.db.pool, payer.walletId)).balance).toBe(40_000_000n - 12_000_000n);
    const failed = await stack.stripe.updateRefund(second[0]!.data.object.id as string, 'failed', { send: false });
    await stack.send(failed[0]!);
    await stack.send(failed[0]!);
    await eventsSettled(stack.db.pool);
    // the charge.refunded events listed both refunds through the API; nothing posted twice
    const entries = await stack.db.pool.query<{ entry_type: string; n: string; total: string }>(
      `select entry_type, count(*)::text as n, sum(amount)::text as total from ledger_entries where grant_id = $1 group by entry_type order by entry_type`,
      [session.grant_id],
    );
    expect(entries.rows).toEqual([
      { entry_type: 'grant', n: '1', total: '40000000' },
      { entry_type: 'refund', n: '2', total: '12000000' },
      { entry_type: 'refund_reversal', n: '1', total: '7000000' },
    ]);
    expect((await walletMoney(stack.db.pool, payer.walletId)).balance).toBe(35_000_000n);
    expect(stack.stripe.requests.filter((r) => r.method === 'GET' && r.path === '/v1/refunds').length).toBeGreaterThanOrEqual(2);
  });

  it('freezes the grant while a dispute is open and posts a lost dispute once', async () => {
    const { payer, session, events, pi } = await paid('50.00');
    for (const e of events) await stack.send(e);
    await eventsSettled(stack.db.pool);
    const opened = await stack.stripe.openDispute(pi, 5000, { send: false });
    await stack.send(opened[0]!);
    await eventsSettled(stack.db.pool);
    expect((await grantRow(stack.db.pool, session.grant_id)).status).toBe('disputed');
    const frozen = (await readWalletFunds(stack.db.pool, [payer.walletId])).get(payer.walletId)!;
    expect(walletTotals(frozen.funds, frozen.now).available).toBe(0n);
    const closed = await stack.stripe.closeDispute(opened[0]!.data.object.id as string, 'lost', { send: false });
    await Promise.all([closed[0]!, closed[0]!, opened[0]!].map((e) => stack.send(e)));
    await eventsSettled(stack.db.pool);
    const losses = await stack.db.pool.query(`select amount from ledger_entries where grant_id = $1 and entry_type = 'dispute_loss'`, [
      session.grant_id,
    ]);
    expect(losses.rows).toEqual([{ amount: 50_000_000n }]);
    const grant = await grantRow(stack.db.pool, session.grant_id);
    expect(grant.disputed).toBe(false);
    expect(grant.remaining).toBe(0n);
    expect((await walletMoney(stack.db.pool, payer.walletId)).balance).toBe(0n);
  });

  it('unfreezes a grant whose dispute is won; a later full refund empties it', async () => {
    const { payer, session, events, pi } = await paid('10.00');
    for (const e of events) await stack.send(e);
    await eventsSettled(stack.db.pool);
    const opened = await stack.stripe.openDispute(pi, 1000, { send: false });
    await stack.send(opened[0]!);
    await eventsSettled(stack.db.pool);
    await stack.send((await stack.stripe.closeDispute(opened[0]!.data.object.id as string, 'won', { send: false }))[0]!);
    await eventsSettled(stack.db.pool);
    expect((await grantRow(stack.db.pool, session.grant_id)).status).toBe('active');
    // refund more than the grant still has unheld: the rest is debt
    const refund = await stack.stripe.refund(pi, 1000, { send: false });
    await stack.send(refund[0]!);
    await eventsSettled(stack.db.pool);
    expect(await walletMoney(stack.db.pool, payer.walletId)).toEqual({ balance: 0n, debt: 0n });
  });
});
