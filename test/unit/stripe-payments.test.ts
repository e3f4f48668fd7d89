import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { meaningOf } from '../../src/funds/payments/event-meaning.js';
import {
  chargeStepMinor,
  microsToMinorCeil,
  microsToMinorExact,
  minimumChargeMicros,
  minorToMicros,
} from '../../src/funds/payments/minor-units.js';
import { decideRecharge, type RechargeSituation } from '../../src/funds/payments/recharge-decision.js';
import { lowersAvailable } from '../../src/funds/payments/recharge.js';
import { parseForm } from '../../src/simulator/stripe/form.js';
import { CHARGE, CHECKOUT_SESSION, CUSTOMER, DISPUTE, PAYMENT_INTENT, REFUND } from '../../src/simulator/stripe/shapes.js';

/** The pure parts of payments: Stripe's minor units, the recharge decision, what an event means; the local Stripe's shapes. */

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/providers/stripe-${name}.json`, import.meta.url), 'utf8'));

describe("Stripe's minor units", () => {
  it('converts exactly: USD cents are 10,000 micros, JPY has no minor unit, KWD three decimals', () => {
    expect(minorToMicros(2000n, 'usd')).toBe(20_000_000n);
    expect(minorToMicros(500n, 'JPY')).toBe(500_000_000n);
    expect(minorToMicros(1n, 'kwd')).toBe(1_000n);
    expect(microsToMinorExact(12_345_000n, 'USD')).toBeNull();
    expect(microsToMinorExact(12_340_000n, 'USD')).toBe(1234n);
    expect(microsToMinorCeil(10_320_001n, 'USD')).toBe(1033n);
    expect(minimumChargeMicros('USD')).toBe(500_000n);
    expect(minimumChargeMicros('jpy')).toBe(50_000_000n);
  });

  it('round-trips every chargeable minor amount, and refuses the rest (KWD in tens of fils, ISK in whole krónur)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.constantFrom('usd', 'jpy', 'eur', 'kwd', 'isk', 'huf'), (minor, currency) => {
        const step = chargeStepMinor(currency);
        const chargeable = minor - (minor % step);
        expect(microsToMinorExact(minorToMicros(chargeable, currency), currency)).toBe(chargeable);
        if (minor % step !== 0n) expect(microsToMinorExact(minorToMicros(minor, currency), currency)).toBeNull();
        // rounding up lands on a chargeable amount at or above it
        const ceil = microsToMinorCeil(minorToMicros(minor, currency), currency);
        expect(ceil % step).toBe(0n);
        expect(ceil >= minor && ceil - minor < step).toBe(true);
      }),
    );
    expect(chargeStepMinor('KWD')).toBe(10n);
    expect(chargeStepMinor('isk')).toBe(100n);
    expect(chargeStepMinor('huf')).toBe(1n);
  });
});

describe('decideRecharge', () => {
  const base: RechargeSituation = {
    enabled: true,
    threshold: 5_000_000n,
    target: 20_000_000n,
    monthlyLimit: null,
    currency: 'USD',
    available: 4_990_000n,
    inFlight: false,
    monthTotal: 0n,
    chargeable: true,
  };

  it('recharges target − available, rounded up to the minor unit, at least the minimum', () => {
    expect(decideRecharge(base)).toEqual({ kind: 'recharge', amount: 15_010_000n, amountMinor: 1501n });
    expect(decideRecharge({ ...base, available: 4_990_001n })).toMatchObject({ amountMinor: 1501n });
    expect(decideRecharge({ ...base, threshold: 20_000_000n, target: 20_100_000n, available: 19_990_000n })).toMatchObject({
      amountMinor: 50n,
    });
    expect(decideRecharge({ ...base, available: -1_000_000n })).toMatchObject({ amountMinor: 2100n });
  });

  it('does nothing at or above the threshold, while one is in flight, without a card, or when disabled', () => {
    expect(decideRecharge({ ...base, available: 5_000_000n })).toEqual({ kind: 'none', reason: 'above_threshold' });
    expect(decideRecharge({ ...base, inFlight: true })).toEqual({ kind: 'none', reason: 'in_flight' });
    expect(decideRecharge({ ...base, chargeable: false })).toEqual({ kind: 'none', reason: 'no_payment_method' });
    expect(decideRecharge({ ...base, enabled: false })).toEqual({ kind: 'none', reason: 'disabled' });
  });

  it('stays within the monthly limit, counting what this month already recharged, or skips below the minimum', () => {
    expect(decideRecharge({ ...base, monthlyLimit: 30_000_000n, monthTotal: 20_000_000n })).toMatchObject({ amountMinor: 1000n });
    expect(decideRecharge({ ...base, monthlyLimit: 30_000_000n, monthTotal: 29_600_000n })).toEqual({
      kind: 'none',
      reason: 'monthly_limit',
    });
  });
});

describe('lowersAvailable', () => {
  it('is true for money leaving the wallet, false for captures, releases, arrivals and debt repayments', () => {
    expect(lowersAvailable([{ type: 'reserve', flags: 'pending', from: { grant: 'g' }, to: 'revenue', amount: 1n }])).toBe(true);
    expect(lowersAvailable([{ type: 'refund', flags: 'posted', from: 'debt', to: 'funding', amount: 1n }])).toBe(true);
    expect(lowersAvailable([{ type: 'capture', flags: 'post_pending', from: { grant: 'g' }, to: 'revenue', amount: 1n }])).toBe(false);
    expect(lowersAvailable([{ type: 'grant', flags: 'posted', from: 'funding', to: { grant: 'g' }, amount: 1n }])).toBe(false);
    expect(lowersAvailable([{ type: 'debt_repayment', flags: 'posted', from: { grant: 'g' }, to: 'debt', amount: 1n }])).toBe(false);
  });
});

describe('meaningOf', () => {
  const grant = '01a24696-5bd6-72e6-bdee-d2c5a44f58d4';
  const wallet = '01a24696-5e61-7247-818c-ca9811d2d1f7';

  it('reads a paid session and a succeeded intent as the same payment, by its payment intent', () => {
    const session = {
      ...fixture('checkout-session'),
      payment_status: 'paid',
      amount_total: 2000,
      currency: 'usd',
      payment_intent: 'pi_1',
      metadata: { tally_grant_id: grant },
    };
    const intent = {
      ...fixture('payment_intent'),
      id: 'pi_1',
      amount_received: 2000,
      currency: 'usd',
      metadata: { tally_grant_id: grant, tally_wallet_id: wallet },
      latest_charge: 'ch_1',
    };
    expect(meaningOf('checkout.session.completed', session)).toMatchObject({
      kind: 'payment_succeeded',
      paymentIntent: 'pi_1',
      amountMinor: 2000n,
      grantId: grant,
    });
    expect(meaningOf('payment_intent.succeeded', intent)).toMatchObject({
      kind: 'payment_succeeded',
      paymentIntent: 'pi_1',
      grantId: grant,
      walletId: wallet,
      charge: 'ch_1',
    });
    expect(meaningOf('checkout.session.completed', { ...session, payment_status: 'unpaid' }).kind).toBe('ignored');
  });

  it('reads refunds, a charge without its refunds, disputes, and ignores what it does not know', () => {
    expect(meaningOf('refund.updated', { ...fixture('refund'), status: 'failed' })).toMatchObject({
      kind: 'refund',
      refund: { status: 'failed', amountMinor: 100n },
    });
    expect(meaningOf('charge.refunded', { ...fixture('charge'), amount_refunded: 100 })).toMatchObject({
      kind: 'charge_refunded',
      refunds: null,
    });
    expect(
      meaningOf('charge.refunded', { ...fixture('charge'), amount_refunded: 100, refunds: { data: [fixture('refund')], has_more: false } }),
    ).toMatchObject({
      refunds: [{ id: fixture('refund').id, amountMinor: 100n }],
    });
    expect(meaningOf('charge.dispute.closed', { ...fixture('dispute'), status: 'lost' })).toMatchObject({
      kind: 'dispute_closed',
      dispute: { status: 'lost' },
    });
    expect(meaningOf('plan.created', fixture('event').data.object)).toMatchObject({ kind: 'ignored' });
    expect(meaningOf('payment_intent.succeeded', { id: 'pi_2', amount_received: '2000', currency: 'usd' }).kind).toBe('ignored');
  });
});

describe('the local Stripe', () => {
  it("answers in the shapes of Stripe's fixtures (every field of each)", () => {
    for (const [shape, name] of [
      [CHECKOUT_SESSION, 'checkout-session'],
      [PAYMENT_INTENT, 'payment_intent'],
      [CHARGE, 'charge'],
      [REFUND, 'refund'],
      [DISPUTE, 'dispute'],
      [CUSTOMER, 'customer'],
    ] as const) {
      expect(Object.keys(shape).sort(), name).toEqual(Object.keys(fixture(name)).sort());
    }
  });

  it("parses the SDK's bracketed form bodies", () => {
    const body =
      'mode=payment&line_items[0][quantity]=1&line_items[0][price_data][currency]=usd&line_items[0][price_data][unit_amount]=1234&metadata[tally_grant_id]=g&payment_method_types[]=card';
    expect(parseForm(body)).toEqual({
      mode: 'payment',
      line_items: [{ quantity: '1', price_data: { currency: 'usd', unit_amount: '1234' } }],
      metadata: { tally_grant_id: 'g' },
      payment_method_types: ['card'],
    });
  });
});
