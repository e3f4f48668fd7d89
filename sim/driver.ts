import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { Api, Reply } from './client.js';
import { Model, ModelDisagrees } from './model.js';
import { OPENAI_KEY, type SimOpenAi } from './openai.js';
import {
  SIM_CURRENCY,
  SIM_MODEL,
  SIM_PROVIDERS,
  SIM_UNIT_PRICES,
  type Answer,
  type Op,
  type ProviderKind,
  type StripeDelivery,
} from './ops.js';
import { sendStripeEvents, type LocalStripe, type StripeEvent } from './stripe.js';
import { ADMIN_TOKEN } from './world.js';

/**
 * Performs ops against Tally and hands each answer to the model: the ops of one wallet one
 * after another (an event op returns once the job's events are settled), wallets at the same
 * time. What disagrees — an answer the model refuses, an answer the driver itself can tell is
 * wrong (a duplicate not absorbed, a forgery accepted) — becomes a Disagreement with the step.
 */

/** Each provider's webhook signing secret */
const SECRETS: Readonly<Record<ProviderKind, string>> = {
  generic: 'whsec_c2ltdWxhdGlvbi1wcm92aWRlci1zZWNyZXQtMzJi',
  replicate: 'whsec_c2ltdWxhdGlvbi1yZXBsaWNhdGUtc2VjcmV0LTMy',
  openai: 'whsec_c2ltdWxhdGlvbi1vcGVuYWktc2VjcmV0LTMyYnl0ZXM=',
};

/** A named job's id at its provider: the prediction's or the response's */
const refOf = (kind: ProviderKind, job: string) => `${kind === 'replicate' ? 'pred' : 'resp'}_sim_${job}`;
const FORGERY_SECRET = 'whsec_bm90LXRoZS1wcm92aWRlci1zZWNyZXQtYXQtYWxsISE=';

export class Disagreement extends Error {
  constructor(
    readonly step: number,
    readonly op: Op,
    message: string,
  ) {
    super(message);
    this.name = 'Disagreement';
  }
}

export interface Ids {
  tenants: Map<string, { id: string; apiKey: string }>;
  wallets: Map<string, { id: string; tenant: string }>;
  grants: Map<string, { id: string; expiresAt: number | null }>;
  jobs: Map<string, string>;
}

const SETTLED = new Set(['applied', 'no_effect', 'stale', 'dead', 'discarded']);
/** A new event's answers: accepted, or already_accepted when a retry follows an attempt whose answer a fault cut */
const ACCEPTED = new Set(['accepted', 'already_accepted']);

function usageString(usage: Record<string, number> | undefined): string {
  return Object.entries(SIM_UNIT_PRICES)
    .map(([d]) => `${d}=${usage?.[d] ?? '-'}`)
    .join(',');
}

export class Driver {
  // the provider's cancel grace (setUp), so that the model releases a job when Tally does
  readonly model = new Model({ cancelGraceMs: 3_600_000 });
  readonly ids: Ids = { tenants: new Map(), wallets: new Map(), grants: new Map(), jobs: new Map() };
  /** each op's answer, for the op log */
  readonly answers: { step: number; op: Op; answer: Answer }[] = [];

  /** each job's provider (generic when absent) */
  private readonly kinds = new Map<string, ProviderKind>();
  /** each paid checkout's payment intent and open dispute, by sim grant name */
  private readonly payments = new Map<string, { paymentIntent: string; dispute: string | null }>();

  constructor(
    private readonly api: Api,
    /** the run's outside world: the local Stripe, the database (for its faults and waits), the OpenAI API */
    private readonly outside: { local: LocalStripe; pool: Pool; openai: SimOpenAi } | null = null,
  ) {}

  async setUp(): Promise<void> {
    if (this.outside !== null) await refuseCapturesOnDemand(this.outside.pool);
    const admin = (method: string, path: string, body: unknown) => this.api.call(method, path, ADMIN_TOKEN, body);
    for (const kind of ['generic', 'replicate', 'openai'] as const) {
      const { provider: name, model, dimensions } = SIM_PROVIDERS[kind];
      // the OpenAI provider only where the run serves its API
      if (kind === 'openai' && this.outside === null) continue;
      const provider = await admin('POST', '/v1/providers', {
        name,
        kind,
        secrets: [SECRETS[kind]],
        ...(kind === 'openai' ? { api_key: OPENAI_KEY, base_url: this.outside!.openai.url } : {}),
        policies: { cancel_grace_seconds: 3600 },
      });
      if (provider.status !== 201) throw new Error(`provider ${name}: ${provider.status} ${JSON.stringify(provider.body)}`);
      const unitPrices = Object.fromEntries(dimensions.map((d) => [d, (Number(SIM_UNIT_PRICES[d]!) / 1e6).toFixed(2)]));
      const price = await admin('PUT', `/v1/prices/${encodeURIComponent(model)}`, { currency: SIM_CURRENCY, unit_prices: unitPrices });
      if (price.status !== 201) throw new Error(`price of ${model}: ${price.status} ${JSON.stringify(price.body)}`);
    }
  }

  /** Waits until no op of `wallet` would fall within 2 s of one of its grants' expiry (the model's clock and the database's agree only so far). */
  async clearOfExpiries(wallet: string): Promise<void> {
    for (;;) {
      const now = Date.now();
      const close = [...this.ids.grants.entries()]
        .filter(([name]) => this.grantWallet.get(name) === wallet)
        .map(([, g]) => g.expiresAt)
        .filter((at): at is number => at !== null && Math.abs(at - now) < 2_000);
      if (close.length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, Math.max(...close) + 2_000 - now));
    }
  }

  private readonly grantWallet = new Map<string, string>();
  /**
   * Each wallet's current op: when it started, and the instant it took effect when Tally's
   * answer tells it (ms since the epoch). By wallet: ops of different wallets run at once.
   */
  private readonly current = new Map<string, { start: number; effectAt: number | null }>();

  async perform(step: number, op: Op): Promise<void> {
    if (op.kind === 'check') return;
    if ('job' in op && op.kind !== 'submit' && !this.ids.jobs.has(op.job)) return; // refused at submission: nothing to act on
    // a refund or dispute of a checkout that was refused or never paid: there is no payment to act on
    if ((op.kind === 'refund' || op.kind === 'dispute_open' || op.kind === 'dispute_close') && !this.payments.has(op.grant)) return;
    if (op.kind === 'dispute_close' && this.payments.get(op.grant)!.dispute === null) return;
    // a dead letter needs a job that still captures (the generator cannot know whether an earlier op ended it)
    if (op.kind === 'dead_letter' && (this.model.ended(op.job) || this.outside === null)) return;
    if (op.kind === 'race_submits' && !this.model.raceFits(op, Date.now())) return;
    if (this.outside === null && (op.kind === 'checkout' || op.kind === 'refund' || op.kind.startsWith('dispute_') || op.kind === 'card')) return;
    if ('wallet' in op) await this.clearOfExpiries(op.wallet);
    const start = Date.now();
    const current = { start, effectAt: null as number | null };
    if ('wallet' in op) this.current.set(op.wallet, current);
    const answer = await this.call(step, op, start).catch((error: unknown) => {
      // Tally unreachable for as long as a client retries is a finding too, with its step and replay
      if (error instanceof Disagreement) throw error;
      throw new Disagreement(step, op, `no answer: ${(error as Error).message}`);
    });
    // a recharge the op decided is charged (or declined) before the model hears of the op
    if (this.outside !== null) await this.paymentsSettled(step, op);
    // When the op took effect, by Tally's clock where its answer says (a retry after a fault
    // may run it long after it started, past a grant's expiry): the model decides at that
    // instant. A grant's expiry is set from the op's start, as sent.
    const at = op.kind === 'grant' ? start : (current.effectAt ?? Date.now());
    this.answers.push({ step, op, answer });
    try {
      this.model.apply(op, answer, at);
    } catch (error) {
      if (error instanceof ModelDisagrees) throw new Disagreement(step, op, error.message);
      throw error;
    }
  }

  private tenantOf(wallet: string) {
    return this.ids.tenants.get(this.ids.wallets.get(wallet)!.tenant)!;
  }

  private async call(step: number, op: Exclude<Op, { kind: 'check' }>, start: number): Promise<Answer> {
    const admin = (method: string, path: string, body: unknown, key?: string) => this.api.call(method, path, ADMIN_TOKEN, body, key);
    const answerOf = (reply: Reply): Answer => ({
      status: reply.status,
      ...(reply.body?.error?.code ? { code: reply.body.error.code as string } : {}),
    });
    const expect = (reply: Reply, status: number, what: string) => {
      if (reply.status !== status) throw new Disagreement(step, op, `${what}: ${reply.status} ${JSON.stringify(reply.body)}`);
      return reply;
    };
    switch (op.kind) {
      case 'tenant': {
        const tenant = expect(
          await admin('POST', '/v1/tenants', { name: `sim-${op.tenant}` }, `sim-tenant-${op.tenant}`),
          201,
          'tenant',
        ).body;
        this.ids.tenants.set(op.tenant, { id: tenant.id, apiKey: tenant.api_key });
        const wallet = expect(
          await this.api.call('POST', '/v1/wallets', tenant.api_key, { currency: SIM_CURRENCY }, `sim-wallet-${op.wallet}`),
          201,
          'wallet',
        ).body;
        this.ids.wallets.set(op.wallet, { id: wallet.id, tenant: op.tenant });
        return { status: 201 };
      }
      case 'credit': {
        const reply = await admin(
          'POST',
          `/v1/wallets/${this.ids.wallets.get(op.wallet)!.id}/credits`,
          { amount: formatMicros(op.amount) },
          `sim-credit-${op.grant}`,
        );
        if (reply.status === 201) this.remember(op.grant, op.wallet, reply.body.grant_id, null);
        return answerOf(reply);
      }
      case 'grant': {
        const expiresAt = op.expiresInMs === null ? null : start + op.expiresInMs;
        const reply = await admin(
          'POST',
          `/v1/wallets/${this.ids.wallets.get(op.wallet)!.id}/grants`,
          {
            amount: formatMicros(op.amount),
            category: op.category,
            priority: op.priority,
            ...(expiresAt === null ? {} : { expires_at: new Date(expiresAt).toISOString() }),
          },
          `sim-grant-${op.grant}`,
        );
        if (reply.status === 201) this.remember(op.grant, op.wallet, reply.body.id, expiresAt);
        return answerOf(reply);
      }
      case 'void_grant':
        return answerOf(await admin('POST', `/v1/grants/${this.ids.grants.get(op.grant)!.id}/void`, { note: `sim step ${step}` }));
      case 'spend_limit': {
        const tenant = this.ids.tenants.get(op.tenant)!;
        return answerOf(
          await admin('PUT', `/v1/tenants/${tenant.id}/spend-limits`, {
            currency: SIM_CURRENCY,
            period: 'day',
            amount: formatMicros(op.amount),
          }),
        );
      }
      case 'submit': {
        const tenant = this.tenantOf(op.wallet);
        const kind = op.provider ?? 'generic';
        const reply = await this.api.call(
          'POST',
          '/v1/jobs',
          tenant.apiKey,
          {
            wallet_id: this.ids.wallets.get(op.wallet)!.id,
            model: SIM_PROVIDERS[kind].model,
            provider: SIM_PROVIDERS[kind].provider,
            limits: op.limits,
            ...(kind === 'generic' ? {} : { provider_job_ref: refOf(kind, op.job) }),
            ...(op.autoExtend ? { auto_extend: op.autoExtend } : {}),
          },
          `sim-submit-${op.job}`,
        );
        if (reply.status === 201) {
          this.ids.jobs.set(op.job, reply.body.id);
          this.kinds.set(op.job, kind);
          this.current.get(op.wallet)!.effectAt = Date.parse(reply.body.created_at);
        }
        return answerOf(reply);
      }
      case 'event':
        return this.event(step, op);
      case 'extend': {
        const tenant = this.tenantOf(op.wallet);
        const key = `sim-extend-${step}`;
        let first: Reply | null = null;
        for (let copy = 0; copy < op.copies; copy++) {
          const reply = await this.api.call(
            'POST',
            `/v1/jobs/${this.ids.jobs.get(op.job)}/extensions`,
            tenant.apiKey,
            { add: op.add },
            key,
          );
          if (first === null) first = reply;
          // a stored answer replays as it was; a 402 is not stored, and the same key may answer otherwise later — never here, nothing changed between the copies
          else if (reply.status !== first.status)
            throw new Disagreement(step, op, `the same Idempotency-Key answered ${first.status}, then ${reply.status}`);
        }
        return answerOf(first!);
      }
      case 'cancel': {
        const tenant = this.tenantOf(op.wallet);
        return answerOf(await this.api.call('POST', `/v1/jobs/${this.ids.jobs.get(op.job)}/cancel`, tenant.apiKey));
      }
      case 'race_extend_complete': {
        const tenant = this.tenantOf(op.wallet);
        const jobId = this.ids.jobs.get(op.job)!;
        const [, extension] = await Promise.all([
          this.deliverOnce(step, op, op.job, 'job.completed', { usage: op.usage }),
          this.api.call('POST', `/v1/jobs/${jobId}/extensions`, tenant.apiKey, { add: op.add }, `sim-race-${step}`),
        ]);
        await this.settled(step, op, jobId);
        return answerOf(extension);
      }
      case 'checkout':
      case 'refund':
      case 'dispute_open':
      case 'dispute_close':
      case 'card':
      case 'auto_recharge':
        return this.payment(step, op);
      case 'dead_letter':
        return this.deadLetter(step, op);
      case 'race_submits':
        return this.raceSubmits(step, op);
      case 'race_cancel_complete': {
        const tenant = this.tenantOf(op.wallet);
        const jobId = this.ids.jobs.get(op.job)!;
        const [, cancel] = await Promise.all([
          this.deliverOnce(step, op, op.job, 'job.completed', { usage: op.usage }),
          this.api.call('POST', `/v1/jobs/${jobId}/cancel`, tenant.apiKey),
        ]);
        await this.settled(step, op, jobId);
        return answerOf(cancel);
      }
    }
  }

  /** The submissions at once, then each job failed (one after another): its hold released. */
  private async raceSubmits(step: number, op: Extract<Op, { kind: 'race_submits' }>): Promise<Answer> {
    const tenant = this.tenantOf(op.wallet);
    const walletId = this.ids.wallets.get(op.wallet)!.id;
    const replies = await Promise.all(
      op.jobs.map((job) =>
        this.api.call(
          'POST',
          '/v1/jobs',
          tenant.apiKey,
          { wallet_id: walletId, model: SIM_MODEL, provider: SIM_PROVIDERS.generic.provider, limits: op.limits },
          `sim-submit-${job}`,
        ),
      ),
    );
    const refused = replies.find((r) => r.status !== 201);
    if (refused) return { status: refused.status, ...(refused.body?.error?.code ? { code: refused.body.error.code as string } : {}) };
    for (const [i, job] of op.jobs.entries()) this.ids.jobs.set(job, replies[i]!.body.id);
    for (const job of op.jobs) {
      const jobId = this.ids.jobs.get(job)!;
      await this.deliverOnce(step, op, job, 'job.failed', {});
      await this.settled(step, op, jobId);
    }
    return { status: 201 };
  }

  /** A completion dead-lettered by the database's refusal, then retried or discarded by the operator. */
  private async deadLetter(step: number, op: Extract<Op, { kind: 'dead_letter' }>): Promise<Answer> {
    const pool = this.outside!.pool;
    const jobId = this.ids.jobs.get(op.job)!;
    const id = `msg_sim_${step}_dead`;
    await pool.query('insert into sim_refused_captures (job_id) values ($1) on conflict do nothing', [jobId]);
    try {
      const { provider, secret, body } = this.webhook(op.job, 'job.completed', { usage: op.usage });
      const first = await this.api.deliver(provider, secret, id, body);
      if (first.status !== 200 || !ACCEPTED.has(first.body?.status))
        throw new Disagreement(step, op, `first delivery: ${first.status} ${JSON.stringify(first.body)}`);
      const deadline = Date.now() + 120_000;
      for (;;) {
        const view = await this.api.call('GET', `/v1/jobs/${jobId}`, ADMIN_TOKEN);
        const event = (view.body?.events ?? []).find((e: { event_key: string }) => e.event_key === id);
        if (event?.state === 'dead') break;
        if (event && SETTLED.has(event.state)) throw new Disagreement(step, op, `a refused capture ended ${event.state}, not dead`);
        if (Date.now() > deadline) throw new Disagreement(step, op, `a refused capture was not dead-lettered in 120 s: ${JSON.stringify(event)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await pool.query('delete from sim_refused_captures where job_id = $1', [jobId]);
    }
    const path = `/v1/events/${SIM_PROVIDERS[this.kinds.get(op.job) ?? 'generic'].provider}/${id}/${op.then}`;
    const reply = await this.api.call('POST', path, ADMIN_TOKEN, op.then === 'discard' ? { note: `sim step ${step}` } : {});
    if (reply.status === (op.then === 'retry' ? 202 : 200)) await this.settled(step, op, jobId);
    return { status: reply.status, ...(reply.body?.error?.code ? { code: reply.body.error.code as string } : {}) };
  }

  /** The payment ops: Tally's API where the tenant acts, the local Stripe where the customer or the bank does, Stripe's events to Tally. */
  private async payment(
    step: number,
    op: Extract<Op, { kind: 'checkout' | 'refund' | 'dispute_open' | 'dispute_close' | 'card' | 'auto_recharge' }>,
  ): Promise<Answer> {
    const stripe = this.outside!.local;
    const tenant = this.tenantOf(op.wallet);
    const walletId = this.ids.wallets.get(op.wallet)!.id;
    const cents = (micros: bigint) => Number(micros / 10_000n);
    let events: StripeEvent[];
    switch (op.kind) {
      case 'card':
        stripe.cards.set(op.card, op.declines ? 'decline' : 'succeed');
        return { status: 200 };
      case 'auto_recharge': {
        const reply = await this.api.call('PUT', `/v1/wallets/${walletId}/auto-recharge`, tenant.apiKey, {
          enabled: op.enabled,
          threshold: formatMicros(op.threshold),
          target: formatMicros(op.target),
          monthly_limit: op.monthlyLimit === null ? null : formatMicros(op.monthlyLimit),
        });
        return { status: reply.status, ...(reply.body?.error?.code ? { code: reply.body.error.code as string } : {}) };
      }
      case 'checkout': {
        const reply = await this.api.call(
          'POST',
          `/v1/wallets/${walletId}/checkout-sessions`,
          tenant.apiKey,
          { amount: formatMicros(op.amount), success_url: 'https://example.com/paid', cancel_url: 'https://example.com/back' },
          `sim-checkout-${op.grant}`,
        );
        if (reply.status !== 201) return { status: reply.status, ...(reply.body?.error?.code ? { code: reply.body.error.code as string } : {}) };
        this.remember(op.grant, op.wallet, reply.body.grant_id, null);
        if (op.paid) {
          events = await stripe.completeCheckout(reply.body.id, { paymentMethod: op.card, send: false });
          const intent = events.find((e) => e.type === 'payment_intent.succeeded')!.data.object.id as string;
          this.payments.set(op.grant, { paymentIntent: intent, dispute: null });
        } else events = await stripe.expireCheckout(reply.body.id, { send: false });
        break;
      }
      case 'refund': {
        const { paymentIntent } = this.payments.get(op.grant)!;
        events = await stripe.refund(paymentIntent, cents(op.amount), { status: op.fails ? 'pending' : 'succeeded', send: false });
        if (op.fails) {
          // the pending refund posts (and any recharge it decides settles) before the bank refuses it
          await this.sendStripe(step, op, events);
          events = await stripe.updateRefund(events[0]!.data.object.id as string, 'failed', { send: false });
        }
        break;
      }
      case 'dispute_open': {
        const payment = this.payments.get(op.grant)!;
        events = await stripe.openDispute(payment.paymentIntent, cents(op.amount), { send: false });
        payment.dispute = events[0]!.data.object.id as string;
        break;
      }
      case 'dispute_close': {
        const payment = this.payments.get(op.grant)!;
        events = await stripe.closeDispute(payment.dispute!, op.outcome, { send: false });
        payment.dispute = null;
        break;
      }
    }
    await this.sendStripe(step, op, events);
    return { status: op.kind === 'checkout' ? 201 : 200 };
  }

  private async sendStripe(step: number, op: Op & { delivery: StripeDelivery }, events: StripeEvent[]): Promise<void> {
    const wrong = await sendStripeEvents(this.api, events, op.delivery);
    if (wrong.length > 0) throw new Disagreement(step, op, `Stripe's events:\n  ${wrong.join('\n  ')}`);
    await this.paymentsSettled(step, op);
  }

  /** Until every Stripe event Tally received is applied (or found without effect) and no call to Stripe is pending; a dead one is a finding. */
  async paymentsSettled(step: number, op: Op): Promise<void> {
    const pool = this.outside!.pool;
    const deadline = Date.now() + 120_000;
    for (;;) {
      const { rows } = await pool.query<{ open: number; dead: string | null }>(
        `select (select count(*)::int from stripe_events where state in ('pending', 'processing'))
              + (select count(*)::int from stripe_calls where state in ('pending', 'calling')) as open,
                (select string_agg(type || ' ' || id || ': ' || coalesce(reason, ''), '; ') from stripe_events where state = 'dead') as dead`,
      );
      if (rows[0]!.dead) throw new Disagreement(step, op, `a Stripe event was dead-lettered: ${rows[0]!.dead}`);
      if (rows[0]!.open === 0) return;
      if (Date.now() > deadline) throw new Disagreement(step, op, `Stripe's events and calls did not settle in 120 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  private remember(grant: string, wallet: string, id: string, expiresAt: number | null): void {
    this.ids.grants.set(grant, { id, expiresAt });
    this.grantWallet.set(grant, wallet);
  }

  /**
   * One event of a job as its provider sends it: the generic provider's `{type, data}`, a
   * Replicate prediction (its status, `metrics.predict_time` in seconds), or an OpenAI event
   * naming the response, whose status and usage the simulation's OpenAI API answers when
   * Tally fetches them. `variant` makes a different body for the same event (a conflict).
   */
  private webhook(
    job: string,
    type: string,
    fields: { usage?: Record<string, number>; correction?: number },
    variant = false,
  ): { provider: string; secret: string; body: string } {
    const jobId = this.ids.jobs.get(job)!;
    const kind = this.kinds.get(job) ?? 'generic';
    const { provider, model } = SIM_PROVIDERS[kind];
    const secret = SECRETS[kind];
    if (kind === 'replicate') {
      const status = { 'job.completed': 'succeeded', 'job.failed': 'failed', 'job.canceled': 'canceled' }[type] ?? 'processing';
      const ms = fields.usage?.predict_ms;
      return {
        provider,
        secret,
        body: JSON.stringify({
          id: refOf(kind, job),
          model,
          version: 'sim-version-1',
          status,
          logs: variant ? 'another body under the same webhook-id' : '',
          metrics: ms === undefined ? {} : { predict_time: ms / 1000 }, // ms / 1000 prints its exact decimal
        }),
      };
    }
    if (kind === 'openai') {
      const status = ({ 'job.completed': 'completed', 'job.failed': 'failed', 'job.canceled': 'cancelled' } as const)[
        type as 'job.completed' | 'job.failed' | 'job.canceled'
      ];
      this.outside!.openai.set(refOf(kind, job), status, fields.usage ?? null, model);
      return {
        provider,
        secret,
        body: JSON.stringify({
          id: `evt_${randomUUID().replace(/-/g, '')}`,
          type: `response.${status}`,
          created_at: Math.floor(Date.now() / 1000) + (variant ? 1 : 0),
          data: { id: refOf(kind, job) },
        }),
      };
    }
    const data = { job_id: jobId, model, currency: SIM_CURRENCY, ...fields, amount: '999.99' }; // an amount is never charged
    if (variant) data.correction = (fields.correction ?? 0) + 1000;
    return { provider, secret, body: JSON.stringify({ type, data }) };
  }

  private async deliverOnce(
    step: number,
    op: Op,
    job: string,
    type: string,
    fields: { usage?: Record<string, number>; correction?: number },
  ): Promise<void> {
    const { provider, secret, body } = this.webhook(job, type, fields);
    const reply = await this.api.deliver(provider, secret, `msg_${randomUUID()}`, body);
    if (reply.status !== 200 || !ACCEPTED.has(reply.body?.status))
      throw new Disagreement(step, op, `a new event: ${reply.status} ${JSON.stringify(reply.body)}`);
  }

  /** Every copy of one event: the first genuine delivery, then its duplicates, a re-emission, a forgery and a conflict at once. */
  private async event(step: number, op: Extract<Op, { kind: 'event' }>): Promise<Answer> {
    const jobId = this.ids.jobs.get(op.job)!;
    const fields = { ...(op.usage ? { usage: op.usage } : {}), ...(op.correction ? { correction: op.correction } : {}) };
    const { provider, secret, body } = this.webhook(op.job, op.type, fields);
    const id = `msg_sim_${step}_${randomUUID().slice(0, 8)}`;
    const first = await this.api.deliver(provider, secret, id, body);
    // already_accepted too: a fault may have cut the answer to an attempt that committed, and the client retried
    if (first.status !== 200 || !ACCEPTED.has(first.body?.status))
      throw new Disagreement(step, op, `first delivery: ${first.status} ${JSON.stringify(first.body)}`);
    const others: Promise<void>[] = [];
    const check = (what: string, reply: Promise<Reply>, ok: (r: Reply) => boolean) =>
      others.push(
        reply.then((r) => {
          if (!ok(r)) throw new Disagreement(step, op, `${what} (${usageString(op.usage)}): ${r.status} ${JSON.stringify(r.body)}`);
        }),
      );
    for (let copy = 1; copy < op.copies; copy++)
      check('a duplicate', this.api.deliver(provider, secret, id, body), (r) => r.status === 200 && r.body?.status === 'already_accepted');
    if (op.reemit)
      check(
        'a re-emission',
        this.api.deliver(provider, secret, `${id}_re`, body),
        (r) => r.status === 200 && ACCEPTED.has(r.body?.status),
      );
    if (op.forged) check('a forgery', this.api.deliver(provider, FORGERY_SECRET, `${id}_forged`, body), (r) => r.status === 401);
    if (op.conflicting)
      check(
        'a conflicting body under the same id',
        this.api.deliver(provider, secret, id, this.webhook(op.job, op.type, fields, true).body),
        (r) => r.status === 409 && r.body?.error?.code === 'event_key_conflict',
      );
    await Promise.all(others);
    await this.settled(step, op, jobId);
    return { status: 200 };
  }

  /** Until every accepted event of the job is settled (a dead letter is a finding). */
  /** When the job's money last moved: its latest settlement's or extension's transaction (null: never). */
  private async movedAt(jobId: string): Promise<number | null> {
    if (this.outside === null) return null;
    const { rows } = await this.outside.pool.query<{ at: Date | null }>(
      `select greatest((select max(created_at) from settlements where job_id = $1),
                       (select max(created_at) from job_extensions where job_id = $1)) as at`,
      [jobId],
    );
    return rows[0]?.at?.getTime() ?? null;
  }

  async settled(step: number, op: Op, jobId: string): Promise<void> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const view = await this.api.call('GET', `/v1/jobs/${jobId}`, ADMIN_TOKEN);
      const events = (view.body?.events ?? []) as { event_key: string; state: string; last_error?: string }[];
      const dead = events.find((e) => e.state === 'dead');
      if (dead) throw new Disagreement(step, op, `event ${dead.event_key} was dead-lettered: ${dead.last_error ?? ''}`);
      if (view.status === 200 && events.every((e) => SETTLED.has(e.state))) {
        // the op took effect when its job's last event settled
        const settledAt = events.map((e) => Date.parse((e as { processed_at?: string | null }).processed_at ?? '')).filter((t) => !Number.isNaN(t));
        const current = 'wallet' in op ? this.current.get(op.wallet) : undefined;
        if (current && settledAt.length > 0) current.effectAt = Math.max(...settledAt);
        // better, when the op moved money: the instant of the transaction that did (an event is
        // marked settled later than that when a lost COMMIT answer made the worker look again,
        // and a grant may have expired in between)
        const moved = await this.movedAt(jobId);
        if (current && moved !== null && moved >= current.start) current.effectAt = moved;
        return;
      }
      if (Date.now() > deadline) throw new Disagreement(step, op, `the job's events did not settle in 120 s: ${JSON.stringify(events)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/**
 * The database's refusal on demand (a fault of the simulation's, like a terminated
 * connection): a trigger makes every capture of a listed job fail, so its completion is
 * dead-lettered; releases still pass.
 */
async function refuseCapturesOnDemand(pool: Pool): Promise<void> {
  await pool.query('create table if not exists sim_refused_captures (job_id uuid primary key)');
  await pool.query(`
    create or replace function sim_refuse_listed_capture() returns trigger language plpgsql as $$
    begin
      if new.charge_type = 'capture' and exists (select 1 from sim_refused_captures where job_id = new.job_id) then
        raise exception 'the capture of job % is refused by the simulation', new.job_id;
      end if;
      return new;
    end $$`);
  await pool.query(`create or replace trigger sim_refuse_listed_capture before insert on settlements
    for each row execute function sim_refuse_listed_capture()`);
}

export function formatMicros(micros: bigint): string {
  const sign = micros < 0n ? '-' : '';
  const abs = micros < 0n ? -micros : micros;
  return `${sign}${abs / 1_000_000n}.${(abs % 1_000_000n).toString().padStart(6, '0')}`;
}

export function parseMicros(amount: string): bigint {
  const negative = amount.startsWith('-');
  const [units, decimals = ''] = (negative ? amount.slice(1) : amount).split('.');
  const micros = BigInt(units!) * 1_000_000n + BigInt(decimals.padEnd(6, '0'));
  return negative ? -micros : micros;
}
