import { Type, type Static, type TSchema } from '@sinclair/typebox';

/**
 * What Tally tells tenants: the event types of outbound webhooks and the shape of each
 * one's `data`. A message's body is `{type, timestamp, data}` (Standard Webhooks'
 * recommended envelope); amounts are decimal strings in major units, as everywhere on the
 * wire. The API documents these schemas, and tests check every enqueued `data` against them.
 */

/** The types an endpoint may subscribe to (`'*'` subscribes to all of them). */
export const OUTBOUND_EVENT_TYPES = [
  'job.settled',
  'wallet.credited',
  'wallet.balance_low',
  'wallet.overdrawn',
  'hold.expired',
  'job.hold_extended',
  'job.hold_exhausted',
  'grant.created',
  'grant.activated',
  'grant.depleted',
  'grant.expired',
  'grant.voided',
  'payment.succeeded',
  'payment.failed',
  'payment.refunded',
  'payment.disputed',
  'auto_recharge.disabled',
] as const;
export type OutboundEventType = (typeof OUTBOUND_EVENT_TYPES)[number];

/** Sent only by POST /v1/webhook-endpoints/{id}/ping, to that one endpoint, whatever it subscribes to. */
export const PING_EVENT_TYPE = 'webhook.ping';
export type MessageType = OutboundEventType | typeof PING_EVENT_TYPE;

/** What an endpoint's `events` may hold. */
export const ALL_EVENTS = '*';

const Amount = Type.String({ description: 'a decimal string in major units, e.g. "12.500000"', examples: ['12.500000'] });
const SignedAmount = Type.String({
  description: 'a signed decimal string in major units (an adjustment may refund: negative)',
  examples: ['-0.001120'],
});
const Currency = Type.String({ description: 'ISO 4217', examples: ['USD'] });
const Id = Type.String();

export const JobSettledData = Type.Object(
  {
    charge_type: Type.Union([Type.Literal('capture'), Type.Literal('release'), Type.Literal('adjustment')]),
    amount: SignedAmount,
    currency: Currency,
    settlement_key: Type.String(),
    job: Type.Object({ id: Id, state: Type.String(), wallet_id: Id, model: Type.String(), provider: Type.String() }),
  },
  { description: 'a settlement committed: the capture, release or adjustment of a job' },
);
export const WalletCreditedData = Type.Object(
  { wallet_id: Id, amount: Amount, currency: Currency, balance: SignedAmount, reference: Type.Union([Type.String(), Type.Null()]) },
  { description: 'a credit was posted to the wallet; balance is after it' },
);
export const WalletBalanceLowData = Type.Object(
  { wallet_id: Id, currency: Currency, threshold: Amount, available: SignedAmount },
  { description: "the wallet's available amount fell below one of its thresholds (once per crossing)" },
);
export const WalletOverdrawnData = Type.Object(
  { wallet_id: Id, currency: Currency, balance: SignedAmount },
  { description: 'a charge for work already delivered took the wallet below zero' },
);
export const HoldExpiredData = Type.Object(
  { job_id: Id, wallet_id: Id, amount: Amount, currency: Currency },
  { description: "a job's hold expired without a terminal event and was released" },
);
const Limits = Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
  description: "the job's limits per usage dimension (units)",
  examples: [{ gpu_seconds: 600 }],
});
export const JobHoldExtendedData = Type.Object(
  {
    job_id: Id,
    version: Type.Integer({ minimum: 1, description: 'N of the extension: its settlement key is {tenant}:{job}:extension:{N}' }),
    amount: Amount,
    reserved: Amount,
    limits: Limits,
    source: Type.Union([Type.Literal('api'), Type.Literal('auto')]),
  },
  { description: "a job's hold grew: amount is what the extension holds, reserved the hold after it, limits the job's limits after it" },
);
export const JobHoldExhaustedData = Type.Object(
  {
    job_id: Id,
    reason: Type.Union([Type.Literal('max_limits'), Type.Literal('insufficient_funds'), Type.Literal('spend_limit'), Type.Null()]),
    reserved: Amount,
    usage_price: Amount,
  },
  {
    description:
      "a running job's hold is short of its usage (auto_extend: a step dimension's limit below its target; without: usage so far priced above the hold); sent once per value of reserved",
  },
);
/** What every grant message names: the grant, its wallet and currency, and its category. */
const grantFields = {
  grant_id: Id,
  wallet_id: Id,
  currency: Currency,
  category: Type.Union([Type.Literal('paid'), Type.Literal('promotional')]),
};
const Instant = Type.String({ description: 'RFC 3339, UTC, to the microsecond', examples: ['2026-12-01T00:00:00.000000Z'] });
export const GrantCreatedData = Type.Object(
  {
    ...grantFields,
    amount: Amount,
    priority: Type.Integer({ minimum: 0, maximum: 100 }),
    source: Type.String({ description: 'credit, grant, stripe_checkout, stripe_payment or auto_recharge', examples: ['grant'] }),
    status: Type.String({ description: "the grant's status once created: active, scheduled or awaiting_payment", examples: ['active'] }),
    effective_at: Instant,
    expires_at: Type.Union([Instant, Type.Null()]),
    reference: Type.Union([Type.String(), Type.Null()]),
  },
  {
    description:
      'a grant was created (a credit is a paid grant, so every credit creates one); one effective at once activates in the same transaction (grant.activated follows)',
  },
);
export const GrantActivatedData = Type.Object(
  { ...grantFields, amount: Amount },
  {
    description: "a grant's money entered the wallet (at creation, at effective_at, or when its payment succeeded), paying any debt first",
  },
);
export const GrantDepletedData = Type.Object(grantFields, {
  description:
    "a posting (a capture, a charge, a refund to the payer, a debt repayment) took the grant's remaining to 0; an expiry or a void is announced as such instead",
});
export const GrantExpiredData = Type.Object(
  { ...grantFields, expired_amount: Amount },
  {
    description:
      "a grant's expiry posted: expired_amount is the unheld remaining that left the wallet then (shares still held stay with their jobs)",
  },
);
export const GrantVoidedData = Type.Object(
  { ...grantFields, voided_amount: Amount, note: Type.String() },
  {
    description:
      'an operator voided the grant: voided_amount is the unheld remaining that left the wallet then (shares still held stay with their jobs)',
  },
);
/** What every payment message names: the grant the payment is for, its wallet, and Stripe's payment intent. */
const paymentFields = {
  grant_id: Id,
  wallet_id: Id,
  currency: Currency,
  source: Type.String({ description: 'stripe_checkout, stripe_payment or auto_recharge', examples: ['stripe_checkout'] }),
  payment_intent: Type.Union([Type.String(), Type.Null()]),
};
export const PaymentSucceededData = Type.Object(
  { ...paymentFields, amount: Amount },
  { description: "a payment succeeded and its grant's money entered the wallet (once per payment intent)" },
);
export const PaymentFailedData = Type.Object(
  {
    ...paymentFields,
    amount: Amount,
    reason: Type.String({ description: 'a decline code, expired, async_payment_failed, requires_action…' }),
  },
  { description: 'a payment failed and its grant, awaiting payment, was canceled (a declined recharge, an expired or failed checkout)' },
);
export const PaymentRefundedData = Type.Object(
  {
    ...paymentFields,
    amount: Amount,
    refund_id: Type.String(),
    status: Type.String({ description: "the refund's status: pending, succeeded, failed or canceled" }),
  },
  {
    description:
      'a refund to the payer posted (pending or succeeded: taken from the grant, the rest as debt), or one that failed came back (failed, canceled)',
  },
);
export const PaymentDisputedData = Type.Object(
  {
    ...paymentFields,
    amount: Amount,
    dispute_id: Type.String(),
    status: Type.String({
      description: "open (the grant is frozen), lost (the amount left the wallet), or the close's status (won…: unfrozen)",
    }),
  },
  { description: 'a dispute of a payment opened or closed' },
);
export const AutoRechargeDisabledData = Type.Object(
  { wallet_id: Id, currency: Currency, consecutive_failures: Type.Integer({ minimum: 0 }), reason: Type.String() },
  { description: 'auto-recharge turned itself off after consecutive failed recharges; a PUT with enabled: true turns it on again' },
);
export const PingData = Type.Object({ endpoint_id: Id }, { description: 'a test message sent on request' });

/** Each type's `data` schema, for the API description and for checks in tests. */
export const MESSAGE_DATA_SCHEMAS = {
  'job.settled': JobSettledData,
  'wallet.credited': WalletCreditedData,
  'wallet.balance_low': WalletBalanceLowData,
  'wallet.overdrawn': WalletOverdrawnData,
  'hold.expired': HoldExpiredData,
  'job.hold_extended': JobHoldExtendedData,
  'job.hold_exhausted': JobHoldExhaustedData,
  'grant.created': GrantCreatedData,
  'grant.activated': GrantActivatedData,
  'grant.depleted': GrantDepletedData,
  'grant.expired': GrantExpiredData,
  'grant.voided': GrantVoidedData,
  'payment.succeeded': PaymentSucceededData,
  'payment.failed': PaymentFailedData,
  'payment.refunded': PaymentRefundedData,
  'payment.disputed': PaymentDisputedData,
  'auto_recharge.disabled': AutoRechargeDisabledData,
  'webhook.ping': PingData,
} as const satisfies Record<MessageType, TSchema>;

/** The `data` a message of type T carries. */
export type MessageData<T extends MessageType> = Static<(typeof MESSAGE_DATA_SCHEMAS)[T]>;

/** The body of a message of type T: what every delivery of it sends. */
export interface MessagePayload<T extends MessageType = MessageType> {
  type: T;
  /** when the message was written: its effect's commit, RFC 3339 */
  timestamp: string;
  data: MessageData<T>;
}
