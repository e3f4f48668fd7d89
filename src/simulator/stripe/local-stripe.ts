import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseForm, type FormValue } from './form.js';
import { CHECKOUT_SESSION, CUSTOMER } from './shapes.js';
import { DEFAULT_ACCOUNT, StripeState, strip, type LocalStripeOptions, type Obj } from './state.js';

export type { CardBehaviour, LocalStripeOptions, RequestRecord } from './state.js';

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

export class LocalStripe extends StripeState {
  private readonly idempotent = new Map<string, Stored | Promise<Stored>>();
  private readonly faults: Fault[] = [];
  private readonly hung: (() => void)[] = [];
  /** the account each customer was created in */
  private readonly customerAccounts = new Map<string, string>();

  private constructor(
    private readonly server: Server,
    url: string,
    options: LocalStripeOptions,
  ) {
    super(url, options);
  }

  static async start(options: LocalStripeOptions = {}): Promise<LocalStripe> {
    let stripe: LocalStripe | undefined;
    const server = createServer((request, response) => void stripe!.handle(request, response));
    server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    stripe = new LocalStripe(server, `http://127.0.0.1:${port}`, options);
    return stripe;
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

  /** The faults asked for and not met yet are dropped (a fault meant for the next few seconds' requests only). */
  clearFaults(): void {
    this.faults.length = 0;
  }

  releaseHung(): void {
    for (const release of this.hung.splice(0)) release();
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
    const apiKey = (request.headers.authorization ?? '').slice('Bearer '.length);
    const account = this.options.accounts?.[apiKey] ?? DEFAULT_ACCOUNT;
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
      const earlier = this.idempotent.get(`${account}:${key}`);
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
        const running = Promise.resolve().then(() => this.route(method, path, params, bodyText, account));
        this.idempotent.set(`${account}:${key}`, running);
        result = await running;
        this.idempotent.set(`${account}:${key}`, result);
      }
    } else {
      result = this.route(method, path, params, bodyText, account);
    }
    if (fault?.kind === 'drop_after_commit') {
      response.destroy();
      return;
    }
    answer(response, result.status, result.body, key !== null && this.idempotent.get(`${account}:${key}`) === result);
  }

  private route(method: string, path: string, params: Record<string, FormValue>, bodyText: string, account: string): Stored {
    const ok = (body: unknown, status = 200): Stored => ({ bodyText, path, status, body });
    let match: RegExpExecArray | null;
    if (method === 'GET' && path === '/v1/account') return ok({ id: account, object: 'account', type: 'standard', country: 'US' });
    const customer = typeof params.customer === 'string' ? params.customer : null;
    if (customer !== null && this.customerAccounts.has(customer) && this.customerAccounts.get(customer) !== account) {
      return ok(
        { error: { type: 'invalid_request_error', code: 'resource_missing', param: 'customer', message: `No such customer: '${customer}'` } },
        400,
      );
    }
    if (method === 'POST' && path === '/v1/customers') {
      const customer = this.object(CUSTOMER, 'cus', { metadata: params.metadata ?? {}, email: params.email ?? null });
      this.customers.set(customer.id as string, customer);
      this.customerAccounts.set(customer.id as string, account);
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
    const quantity = minorUnits(first?.quantity ?? '1');
    const unit = minorUnits(first?.price_data?.unit_amount);
    const currency = first?.price_data?.currency;
    const total = unit !== null && quantity !== null ? wireInteger(unit * quantity) : null;
    if (params.mode !== 'payment' || !currency || unit === null || unit <= 0n || quantity === null || total === null) {
      return {
        ...ok(apiError('invalid_request_error', 'mode payment with one line item of price_data (currency, unit_amount) is required'), 400),
      };
    }
    const id = this.id('cs_test');
    const session = this.object(CHECKOUT_SESSION, 'cs_test', {
      id,
      amount_subtotal: total,
      amount_total: total,
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
    const units = minorUnits(params.amount);
    const amount = units === null || units <= 0n ? null : wireInteger(units);
    if (amount === null || typeof params.currency !== 'string') {
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

/**
 * A form field holding a whole number of minor units, as Stripe reads one: decimal digits
 * only, and exactly representable (at most 15 digits); anything else is null.
 */
/** A form field of whole minor units (or a quantity), read from its digits as a bigint: exact. */
function minorUnits(value: unknown): bigint | null {
  return typeof value === 'string' && /^\d{1,15}$/.test(value) ? BigInt(value) : null;
}

/**
 * An amount as Stripe's JSON carries it (a number), or null past 2^53 − 1, where a JSON
 * number could no longer hold it exactly (the real API refuses such amounts too).
 */
function wireInteger(units: bigint): number | null {
  return units <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(units) : null;
}
