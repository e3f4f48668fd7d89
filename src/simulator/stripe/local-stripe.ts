import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseForm, type FormValue } from './form.js';
import { CHARGE, CHECKOUT_SESSION, CUSTOMER, DISPUTE, PAYMENT_INTENT, REFUND } from './shapes.js';
import { sendStripeEvent, stripeEvent, type StripeEvent } from './events.js';

/**
 * A local Stripe for tests and `tally demo`: the part of Stripe's API Tally calls
 * (customers, Checkout Sessions, payment intents, refunds and events lists), answering
 * with the official fixtures' shapes (shapes.ts) and honouring Idempotency-Key as Stripe
 * does — the same key with the same parameters answers the first answer again, with other
 * parameters 400 idempotency_error. It can be told to fail (5xx), hang, decline a card,
 * require an action, or commit a POST and then drop the answer. What happens at the
 * "customer's" end — paying a session, refunding, disputing — is done by its methods,
 * which return (and, with `deliverTo`, send) the signed events Stripe would send.
 */

type Obj = Record<string, unknown>;

export type CardBehaviour = 'succeed' | 'decline' | 'requires_action' | 'processing';

interface Stored {
  bodyText: string;
  path: string;
  status: number;
  body: unknown;
}

interface Fault {
  kind: 'fail' | 'hang' | 'drop_after_commit';
  path: RegExp;
  status: number;
}

export interface RequestRecord {
  method: string;
  path: string;
  idempotencyKey: string | null;
  params: Record<string, FormValue>;
}

export interface LocalStripeOptions {
  /** where generated events are sent, signed with `secret` (none: only returned and listed) */
  deliverTo?: { url: string; secret: string };
  port?: number;
}

export class LocalStripe {
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
  private readonly idempotent = new Map<string, Stored | Promise<Stored>>();
  private readonly faults: Fault[] = [];
  private readonly hung: (() => void)[] = [];
  private deliveries: Promise<unknown>[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private options: LocalStripeOptions,
  ) {}

  static async start(options: LocalStripeOptions = {}): Promise<LocalStripe> {
    let stripe: LocalStripe | undefined;
    const server = createServer((request, response) => void stripe!.handle(request, response));
    server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    stripe = new LocalStripe(server, `http://127.0.0.1:${port}`, options);
    return stripe;
  }

  /** Sends generated events to Tally from now on (or stops, with null). */
  deliverTo(target: { url: string; secret: string } | null): void {
    this.options = { ...this.options, deliverTo: target ?? undefined };
  }

  async close(): Promise<void> {
    for (const release of this.hung.splice(0)) release();
    await Promise.allSettled(this.deliveries);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The next `count` requests to a path matching `path` answer 5xx and change nothing. */
  failNext(count: number, path: RegExp = /.*/, status = 500): void {
    for (let i = 0; i < count; i++) this.faults.push({ kind: 'fail', path, status });
  }

  /** The next `count` requests to `path` are never answered (until releaseHung or close). */
  hangNext(count: number, path: RegExp = /.*/): void {
    for (let i = 0; i < count; i++) this.faults.push({ kind: 'hang', path, status: 0 });
  }

  /** The next `count` POSTs to `path` are carried out (and their answer kept for their key), then the connection is cut. */
  dropAfterCommitNext(count: number, path: RegExp = /.*/): void {
    for (let i = 0; i < count; i++) this.faults.push({ kind: 'drop_after_commit', path, status: 0 });
  }

  releaseHung(): void {
    for (const release of this.hung.splice(0)) release();
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

  private async deliver(events: StripeEvent[]): Promise<void> {
    const target = this.options.deliverTo;
    if (!target) return;
    for (const event of events) {
      const sent = sendStripeEvent(target.url, event, target.secret).catch(() => null);
      this.deliveries.push(sent);
      await sent;
    }
  }

  // --- the HTTP API ---

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const bodyText = Buffer.concat(chunks).toString('utf8');
    const url = new URL(request.url ?? '/', 'http://local');
    const path = url.pathname;
    const method = request.method ?? 'GET';
    const key = typeof request.headers['idempotency-key'] === 'string' ? request.headers['idempotency-key'] : null;
    const params = method === 'GET' ? parseForm(url.searchParams.toString()) : parseForm(bodyText);
    this.requests.push({ method, path, idempotencyKey: key, params });
    if (!/^Bearer (sk|rk)_(test|live)_\S+$/.test(request.headers.authorization ?? '')) {
      return answer(response, 401, apiError('invalid_request_error', 'Invalid API Key provided'));
    }
    const faultAt = this.faults.findIndex((f) => f.path.test(path));
    const fault = faultAt >= 0 ? this.faults.splice(faultAt, 1)[0] : undefined;
    if (fault?.kind === 'fail')
      return answer(response, fault.status, apiError('api_error', 'Something went wrong on our end (local Stripe told to fail)'));
    if (fault?.kind === 'hang') {
      await new Promise<void>((resolve) => this.hung.push(resolve));
      response.destroy();
      return;
    }
    let result: Stored;
    if (method === 'POST' && key) {
      const earlier = this.idempotent.get(key);
      if (earlier) {
        const first = await earlier;
        result =
          first.bodyText === bodyText && first.path === path
            ? first
            : {
                bodyText,
                path,
                status: 400,
                body: apiError(
                  'idempotency_error',
                  `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
                ),
              };
      } else {
        const running = Promise.resolve().then(() => this.route(method, path, params, bodyText));
        this.idempotent.set(key, running);
        result = await running;
        this.idempotent.set(key, result);
      }
    } else {
      result = this.route(method, path, params, bodyText);
    }
    if (fault?.kind === 'drop_after_commit') {
      response.destroy();
      return;
    }
    answer(response, result.status, result.body, key !== null && this.idempotent.get(key) === result);
  }

  private route(method: string, path: string, params: Record<string, FormValue>, bodyText: string): Stored {
    const ok = (body: unknown, status = 200): Stored => ({ bodyText, path, status, body });
    let match: RegExpExecArray | null;
    if (method === 'POST' && path === '/v1/customers') {
      const customer = this.object(CUSTOMER, 'cus', { metadata: params.metadata ?? {}, email: params.email ?? null });
      this.customers.set(customer.id as string, customer);
      return ok(customer);
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') return this.createSession(params, ok);
    if (method === 'POST' && path === '/v1/payment_intents') return this.createPaymentIntent(params, ok);
    if (method === 'GET' && (match = /^\/v1\/payment_intents\/([^/]+)$/.exec(path))) return this.found(this.paymentIntents, match[1]!, ok);
    if (method === 'GET' && (match = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path))) return this.found(this.sessions, match[1]!, ok);
    if (method === 'GET' && (match = /^\/v1\/charges\/([^/]+)$/.exec(path))) return this.found(this.charges, match[1]!, ok);
    if (method === 'GET' && path === '/v1/refunds') {
      const charge = typeof params.charge === 'string' ? params.charge : null;
      const data = [...this.refunds.values()].filter((r) => !charge || r.charge === charge).reverse();
      return ok(list('/v1/refunds', data.map(strip)));
    }
    if (method === 'GET' && path === '/v1/events') return ok(this.listEvents(params));
    return { bodyText, path, status: 404, body: apiError('invalid_request_error', `Unrecognized request URL (${method}: ${path}).`) };
  }

  private createSession(params: Record<string, FormValue>, ok: (body: unknown, status?: number) => Stored): Stored {
    const items = Array.isArray(params.line_items) ? (params.line_items as Obj[]) : [];
    const first = items[0] as { quantity?: string; price_data?: { currency?: string; unit_amount?: string } } | undefined;
    const quantity = Number(first?.quantity ?? 1);
    const unit = Number(first?.price_data?.unit_amount ?? NaN);
    const currency = first?.price_data?.currency;
    if (params.mode !== 'payment' || !currency || !Number.isSafeInteger(unit) || unit <= 0) {
      return {
        ...ok(apiError('invalid_request_error', 'mode payment with one line item of price_data (currency, unit_amount) is required'), 400),
      };
    }
    const id = this.id('cs_test');
    const session = this.object(CHECKOUT_SESSION, 'cs_test', {
      id,
      amount_subtotal: unit * quantity,
      amount_total: unit * quantity,
      currency,
      customer: params.customer ?? null,
      client_reference_id: params.client_reference_id ?? null,
      metadata: params.metadata ?? {},
      mode: 'payment',
      payment_intent: null,
      payment_status: 'unpaid',
      status: 'open',
      success_url: params.success_url ?? null,
      cancel_url: params.cancel_url ?? null,
      url: `${this.url}/c/pay/${id}`,
      __payment_intent_data: params.payment_intent_data ?? {},
    });
    this.sessions.set(id, session);
    return ok(strip(session));
  }

  private createPaymentIntent(params: Record<string, FormValue>, ok: (body: unknown, status?: number) => Stored): Stored {
    const amount = Number(params.amount);
    if (!Number.isSafeInteger(amount) || amount <= 0 || typeof params.currency !== 'string') {
      return ok(apiError('invalid_request_error', 'amount (a positive integer) and currency are required'), 400);
    }
    const pi = this.newPaymentIntent({
      amount,
      currency: params.currency,
      customer: (params.customer as string | undefined) ?? null,
      payment_method: (params.payment_method as string | undefined) ?? null,
      metadata: (params.metadata as Obj | undefined) ?? {},
      setup_future_usage: null,
    });
    if (params.confirm !== 'true') return ok(strip(pi));
    const behaviour = this.cards.get(pi.payment_method as string) ?? (/declined/i.test(String(pi.payment_method)) ? 'decline' : 'succeed');
    if (behaviour === 'decline') {
      Object.assign(pi, {
        status: 'requires_payment_method',
        last_payment_error: {
          type: 'card_error',
          code: 'card_declined',
          decline_code: 'generic_decline',
          message: 'Your card was declined.',
        },
      });
      this.record('payment_intent.payment_failed', pi);
      void this.deliver([this.events.at(-1)!]);
      return ok(
        {
          error: {
            type: 'card_error',
            code: 'card_declined',
            decline_code: 'generic_decline',
            message: 'Your card was declined.',
            payment_intent: strip(pi),
          },
        },
        402,
      );
    }
    if (behaviour === 'requires_action') {
      Object.assign(pi, { status: 'requires_action', next_action: { type: 'use_stripe_sdk' } });
      return ok(strip(pi));
    }
    if (behaviour === 'processing') {
      Object.assign(pi, { status: 'processing' });
      return ok(strip(pi));
    }
    this.succeed(pi);
    this.record('payment_intent.succeeded', pi);
    void this.deliver([this.events.at(-1)!]);
    return ok(strip(pi));
  }

  private newPaymentIntent(fields: {
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

  private succeed(pi: Obj): void {
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

  private listEvents(params: Record<string, FormValue>) {
    const created = (params.created ?? {}) as Record<string, string>;
    const after = created.gt !== undefined ? Number(created.gt) : created.gte !== undefined ? Number(created.gte) - 1 : -Infinity;
    let data = this.events.filter((e) => e.created > after).reverse();
    if (typeof params.starting_after === 'string') {
      const at = data.findIndex((e) => e.id === params.starting_after);
      data = at >= 0 ? data.slice(at + 1) : data;
    }
    const limit = Math.min(100, Number(params.limit ?? 10));
    return { ...list('/v1/events', data.slice(0, limit)), has_more: data.length > limit };
  }

  private found(map: Map<string, Obj>, id: string, ok: (body: unknown, status?: number) => Stored): Stored {
    const object = map.get(id);
    return object ? ok(strip(object)) : ok(apiError('invalid_request_error', `No such object: '${id}'`), 404);
  }

  private object(shape: Obj, prefix: string, fields: Obj): Obj {
    return { ...structuredClone(shape), id: this.id(prefix), created: Math.floor(Date.now() / 1000), livemode: false, ...fields };
  }

  private id(prefix: string): string {
    return `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
  }
}

function strip(object: Obj): Obj {
  return Object.fromEntries(Object.entries(object).filter(([key, value]) => !key.startsWith('__') && value !== undefined));
}

function list(url: string, data: unknown[]) {
  return { object: 'list', data, has_more: false, url };
}

function apiError(type: string, message: string) {
  return { error: { type, message } };
}

function answer(response: ServerResponse, status: number, body: unknown, replayed = false): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'request-id': `req_${randomBytes(8).toString('hex')}`,
    ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
  });
  response.end(text);
}
