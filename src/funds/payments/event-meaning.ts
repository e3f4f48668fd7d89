/**
 * What a Stripe event means to Tally (CONTRACT.md "Payments (Stripe)"), read from the
 * event's object alone. Pure: the settle step (funds/payments/payment-settle.ts) looks up what it
 * names under locks and applies it. Amounts stay in Stripe's minor units here; unknown
 * fields are ignored, and a field of the wrong type is treated as absent.
 */

export interface PaymentSuccess {
  kind: 'payment_succeeded';
  paymentIntent: string;
  /** the session's amount_total or the intent's amount_received */
  amountMinor: bigint;
  currency: string;
  grantId: string | null;
  walletId: string | null;
  customer: string | null;
  paymentMethod: string | null;
  charge: string | null;
  /** what told us: a Checkout Session or the payment intent itself */
  via: 'checkout_session' | 'payment_intent';
  checkoutSession: string | null;
}

export interface RefundFacts {
  id: string;
  amountMinor: bigint;
  currency: string;
  status: string;
  charge: string | null;
  paymentIntent: string | null;
}

export interface DisputeFacts {
  id: string;
  amountMinor: bigint;
  currency: string;
  status: string;
  charge: string | null;
  paymentIntent: string | null;
}

export type EventMeaning =
  | PaymentSuccess
  | { kind: 'checkout_failed'; grantId: string | null; checkoutSession: string; why: 'expired' | 'async_payment_failed' }
  | {
      kind: 'payment_failed';
      paymentIntent: string;
      grantId: string | null;
      walletId: string | null;
      code: string | null;
    }
  | { kind: 'refund'; refund: RefundFacts }
  | { kind: 'charge_refunded'; charge: string; paymentIntent: string | null; currency: string; refunds: RefundFacts[] | null }
  | { kind: 'dispute_opened'; dispute: DisputeFacts }
  | { kind: 'dispute_closed'; dispute: DisputeFacts }
  | { kind: 'ignored'; reason: string };

type Obj = Record<string, unknown>;

const str = (o: Obj, key: string): string | null => (typeof o[key] === 'string' && o[key] !== '' ? (o[key] as string) : null);
/** An id, or the id of an expanded object. */
const ref = (o: Obj, key: string): string | null => {
  const value = o[key];
  if (typeof value === 'string' && value !== '') return value;
  if (value && typeof value === 'object' && typeof (value as Obj).id === 'string') return (value as Obj).id as string;
  return null;
};
const int = (o: Obj, key: string): bigint | null =>
  typeof o[key] === 'number' && Number.isSafeInteger(o[key]) && (o[key] as number) >= 0 ? BigInt(o[key] as number) : null;
const meta = (o: Obj): Obj => (o.metadata && typeof o.metadata === 'object' ? (o.metadata as Obj) : {});
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const uuid = (value: string | null): string | null => (value && UUID.test(value) ? value.toLowerCase() : null);

export function meaningOf(type: string, object: Obj): EventMeaning {
  switch (type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      if (object.payment_status !== 'paid')
        return { kind: 'ignored', reason: `checkout session payment_status is ${String(object.payment_status)}` };
      const paymentIntent = ref(object, 'payment_intent');
      const amount = int(object, 'amount_total');
      const currency = str(object, 'currency');
      if (!paymentIntent || amount === null || !currency)
        return { kind: 'ignored', reason: 'checkout session without a payment intent, amount_total or currency' };
      const m = meta(object);
      return {
        kind: 'payment_succeeded',
        paymentIntent,
        amountMinor: amount,
        currency,
        grantId: uuid(str(m, 'tally_grant_id')) ?? uuid(str(object, 'client_reference_id')),
        walletId: uuid(str(m, 'tally_wallet_id')),
        customer: ref(object, 'customer'),
        paymentMethod: null,
        charge: null,
        via: 'checkout_session',
        checkoutSession: str(object, 'id'),
      };
    }
    case 'checkout.session.expired':
    case 'checkout.session.async_payment_failed': {
      const id = str(object, 'id');
      if (!id) return { kind: 'ignored', reason: 'checkout session without an id' };
      return {
        kind: 'checkout_failed',
        grantId: uuid(str(meta(object), 'tally_grant_id')) ?? uuid(str(object, 'client_reference_id')),
        checkoutSession: id,
        why: type === 'checkout.session.expired' ? 'expired' : 'async_payment_failed',
      };
    }
    case 'payment_intent.succeeded': {
      const id = str(object, 'id');
      const amount = int(object, 'amount_received');
      const currency = str(object, 'currency');
      if (!id || amount === null || !currency)
        return { kind: 'ignored', reason: 'payment intent without an id, amount_received or currency' };
      const m = meta(object);
      return {
        kind: 'payment_succeeded',
        paymentIntent: id,
        amountMinor: amount,
        currency,
        grantId: uuid(str(m, 'tally_grant_id')),
        walletId: uuid(str(m, 'tally_wallet_id')),
        customer: ref(object, 'customer'),
        paymentMethod: ref(object, 'payment_method'),
        charge: ref(object, 'latest_charge'),
        via: 'payment_intent',
        checkoutSession: null,
      };
    }
    case 'payment_intent.payment_failed': {
      const id = str(object, 'id');
      if (!id) return { kind: 'ignored', reason: 'payment intent without an id' };
      const m = meta(object);
      const error = object.last_payment_error && typeof object.last_payment_error === 'object' ? (object.last_payment_error as Obj) : {};
      return {
        kind: 'payment_failed',
        paymentIntent: id,
        grantId: uuid(str(m, 'tally_grant_id')),
        walletId: uuid(str(m, 'tally_wallet_id')),
        code: str(error, 'decline_code') ?? str(error, 'code'),
      };
    }
    case 'refund.created':
    case 'refund.updated':
    case 'charge.refund.updated': {
      const refund = refundOf(object);
      return refund ? { kind: 'refund', refund } : { kind: 'ignored', reason: 'refund without an id, amount, currency or status' };
    }
    case 'charge.refunded': {
      const charge = str(object, 'id');
      const currency = str(object, 'currency');
      if (!charge || !currency) return { kind: 'ignored', reason: 'charge without an id or currency' };
      const listed = object.refunds && typeof object.refunds === 'object' ? (object.refunds as Obj) : null;
      const list = listed?.data;
      const refunds = Array.isArray(list) ? list.map((r) => (r && typeof r === 'object' ? refundOf(r as Obj) : null)) : null;
      // Complete only when every refund is there: newer API versions send none, a long list is paged.
      const complete =
        refunds !== null &&
        refunds.every((r) => r !== null) &&
        listed?.has_more !== true &&
        (refunds as RefundFacts[]).reduce((sum, r) => sum + r.amountMinor, 0n) >= (int(object, 'amount_refunded') ?? 0n);
      return {
        kind: 'charge_refunded',
        charge,
        paymentIntent: ref(object, 'payment_intent'),
        currency,
        refunds: complete ? (refunds as RefundFacts[]) : null,
      };
    }
    case 'charge.dispute.created':
    case 'charge.dispute.closed': {
      const dispute = disputeOf(object);
      if (!dispute) return { kind: 'ignored', reason: 'dispute without an id, amount, currency or status' };
      return { kind: type === 'charge.dispute.created' ? 'dispute_opened' : 'dispute_closed', dispute };
    }
    default:
      return { kind: 'ignored', reason: `event type ${type} has no effect in Tally` };
  }
}

export function refundOf(object: Obj): RefundFacts | null {
  const id = str(object, 'id');
  const amount = int(object, 'amount');
  const currency = str(object, 'currency');
  const status = str(object, 'status');
  if (!id || amount === null || !currency || !status) return null;
  return { id, amountMinor: amount, currency, status, charge: ref(object, 'charge'), paymentIntent: ref(object, 'payment_intent') };
}

function disputeOf(object: Obj): DisputeFacts | null {
  const id = str(object, 'id');
  const amount = int(object, 'amount');
  const currency = str(object, 'currency');
  const status = str(object, 'status');
  if (!id || amount === null || !currency || !status) return null;
  return { id, amountMinor: amount, currency, status, charge: ref(object, 'charge'), paymentIntent: ref(object, 'payment_intent') };
}

/** A refund that took money back to the payer (posted), or one that failed after (credited back). */
export function refundTakesMoney(status: string): boolean {
  return status === 'pending' || status === 'succeeded';
}
export function refundUndone(status: string): boolean {
  return status === 'failed' || status === 'canceled';
}
