import { randomBytes } from 'node:crypto';
import { CHARGE, DISPUTE, PAYMENT_INTENT, REFUND } from './shapes.js';
import { sendStripeEvent, stripeEvent, type StripeEvent } from './events.js';

/**
 * The local Stripe's objects and what happens on Stripe's side of them (local-stripe.ts
 * serves them over HTTP): a customer paying a Checkout Session, a refund, a dispute, each
 * returning — and, with `deliverTo`, sending, signed — the events Stripe would send.
 */

export type Obj = Record<string, unknown>;

export type CardBehaviour = 'succeed' | 'decline' | 'requires_action' | 'processing';

export interface RequestRecord {
  method: string;
  path: string;
  idempotencyKey: string | null;
  params: Record<string, unknown>;
}

export interface LocalStripeOptions {
  /** where generated events are sent, signed with `secret` (none: only returned and listed) */
  deliverTo?: { url: string; secret: string };
  port?: number;
  /**
   * Which Stripe account each API key belongs to (GET /v1/account answers it); a key not
   * listed belongs to DEFAULT_ACCOUNT. Customers and Idempotency-Keys are the account's,
   * as in Stripe: another account's customer is "No such customer".
   */
  accounts?: Record<string, string>;
}

export const DEFAULT_ACCOUNT = 'acct_1LocalStripeTally';

export class StripeState {
  readonly customers = new Map<string, Obj>();
  readonly sessions = new Map<string, Obj>();
  readonly paymentIntents = new Map<string, Obj>();
  readonly charges = new Map<string, Obj>();
  readonly refunds = new Map<string, Obj>();
  readonly disputes = new Map<string, Obj>();
  /** every event generated, oldest first (GET /v1/events lists them newest first) */
  readonly events: StripeEvent[] = [];
  readonly requests: RequestRecord[] = [];
  /** how each payment method fares in an off-session confirm (unlisted: succeed) */
  readonly cards = new Map<string, CardBehaviour>();
  protected deliveries: Promise<unknown>[] = [];

  constructor(
    readonly url: string,
    protected options: LocalStripeOptions,
  ) {}

  /** Sends generated events to Tally from now on (or stops, with null). */
  deliverTo(target: { url: string; secret: string } | null): void {
    this.options = { ...this.options, deliverTo: target ?? undefined };
  }

  /** Payment intents made so far (for "exactly one payment intent" checks). */
  paymentIntentCount(filter: (pi: Obj) => boolean = () => true): number {
    return [...this.paymentIntents.values()].filter(filter).length;
  }

  // --- what happens on Stripe's side, and the events it sends ---

  /** The customer pays an open Checkout Session: its payment intent and charge succeed. */
  async completeCheckout(sessionId: string, options: { paymentMethod?: string; send?: boolean } = {}): Promise<StripeEvent[]> {
    const session = this.sessions.get(sessionId);
    if (!session) throw new Error(`no checkout session ${sessionId}`);
    const data = (session.__payment_intent_data as Obj | undefined) ?? {};
    const pi = this.newPaymentIntent({
      amount: session.amount_total as number,
      currency: session.currency as string,
      customer: session.customer as string | null,
      payment_method: options.paymentMethod ?? 'pm_card_visa',
      metadata: (data.metadata as Obj | undefined) ?? {},
      setup_future_usage: (data.setup_future_usage as string | undefined) ?? null,
    });
    this.succeed(pi);
    Object.assign(session, { payment_intent: pi.id, payment_status: 'paid', status: 'complete' });
    const events = [
      this.record('checkout.session.completed', session),
      this.record('payment_intent.succeeded', pi),
      this.record('charge.succeeded', this.charges.get(pi.latest_charge as string)!),
    ];
    if (options.send !== false) await this.deliver(events);
    return events;
  }

  /** The session expires unpaid. */
  async expireCheckout(sessionId: string, options: { send?: boolean } = {}): Promise<StripeEvent[]> {
    const session = this.sessions.get(sessionId)!;
    Object.assign(session, { status: 'expired' });
    const events = [this.record('checkout.session.expired', session)];
    if (options.send !== false) await this.deliver(events);
    return events;
  }

  /** A refund of a succeeded payment (`amount` in minor units), as the dashboard makes one. */
  async refund(paymentIntentId: string, amount: number, options: { status?: string; send?: boolean } = {}): Promise<StripeEvent[]> {
    const pi = this.paymentIntents.get(paymentIntentId)!;
    const charge = this.charges.get(pi.latest_charge as string)!;
    const refund = this.object(REFUND, 're', {
      amount,
      charge: charge.id,
      currency: pi.currency,
      payment_intent: pi.id,
      status: options.status ?? 'succeeded',
    });
    this.refunds.set(refund.id as string, refund);
    charge.amount_refunded = (charge.amount_refunded as number) + amount;
    charge.refunded = charge.amount_refunded === charge.amount;
    // Newer API versions no longer include the charge's refunds: Tally lists them.
    const events = [this.record('refund.created', refund), this.record('charge.refunded', { ...charge, refunds: undefined })];
    if (options.send !== false) await this.deliver(events);
    return events;
  }

  async updateRefund(refundId: string, status: string, options: { send?: boolean } = {}): Promise<StripeEvent[]> {
    const refund = this.refunds.get(refundId)!;
    refund.status = status;
    const events = [this.record('refund.updated', refund)];
    if (options.send !== false) await this.deliver(events);
    return events;
  }

  async openDispute(paymentIntentId: string, amount: number, options: { send?: boolean } = {}): Promise<StripeEvent[]> {
    const pi = this.paymentIntents.get(paymentIntentId)!;
    const dispute = this.object(DISPUTE, 'dp', {
      amount,
      charge: pi.latest_charge,
      currency: pi.currency,
      payment_intent: pi.id,
      status: 'needs_response',
    });
    this.disputes.set(dispute.id as string, dispute);
    const events = [this.record('charge.dispute.created', dispute)];
    if (options.send !== false) await this.deliver(events);
    return events;
  }

  async closeDispute(
    disputeId: string,
    status: 'won' | 'lost' | 'warning_closed',
    options: { send?: boolean } = {},
  ): Promise<StripeEvent[]> {
    const dispute = this.disputes.get(disputeId)!;
    dispute.status = status;
    const events = [this.record('charge.dispute.closed', dispute)];
    if (options.send !== false) await this.deliver(events);
    return events;
  }

  /** An event about `object`, recorded for GET /v1/events (and sent with `deliverTo`). */
  record(type: string, object: Obj): StripeEvent {
    const event = stripeEvent(type, structuredClone(strip(object)), this.id('evt'));
    this.events.push(event);
    return event;
  }

  protected async deliver(events: StripeEvent[]): Promise<void> {
    const target = this.options.deliverTo;
    if (!target) return;
    for (const event of events) {
      const sent = sendStripeEvent(target.url, event, target.secret).catch(() => null);
      this.deliveries.push(sent);
      await sent;
    }
  }

  protected newPaymentIntent(fields: {
    amount: number;
    currency: string;
    customer: string | null;
    payment_method: string | null;
    metadata: Obj;
    setup_future_usage: string | null;
  }): Obj {
    const id = this.id('pi');
    const pi = this.object(PAYMENT_INTENT, 'pi', {
      id,
      ...fields,
      amount_received: 0,
      canceled_at: null,
      client_secret: `${id}_secret_${randomBytes(8).toString('hex')}`,
      last_payment_error: null,
      latest_charge: null,
      next_action: null,
      status: 'requires_confirmation',
      processing: null,
    });
    this.paymentIntents.set(id, pi);
    return pi;
  }

  protected succeed(pi: Obj): void {
    const charge = this.object(CHARGE, 'ch', {
      amount: pi.amount,
      amount_captured: pi.amount,
      amount_refunded: 0,
      captured: true,
      currency: pi.currency,
      customer: pi.customer,
      paid: true,
      payment_intent: pi.id,
      payment_method: pi.payment_method,
      refunded: false,
      status: 'succeeded',
      metadata: pi.metadata,
    });
    this.charges.set(charge.id as string, charge);
    Object.assign(pi, { status: 'succeeded', amount_received: pi.amount, latest_charge: charge.id });
  }

  protected object(shape: Obj, prefix: string, fields: Obj): Obj {
    return { ...structuredClone(shape), id: this.id(prefix), created: Math.floor(Date.now() / 1000), livemode: false, ...fields };
  }

  protected id(prefix: string): string {
    return `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
  }
}

export function strip(object: Obj): Obj {
  return Object.fromEntries(Object.entries(object).filter(([key, value]) => !key.startsWith('__') && value !== undefined));
}
