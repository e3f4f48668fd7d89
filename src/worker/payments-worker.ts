import type { Pool } from '../db/pool.js';
import { Poller } from '../queue/engine/index.js';
import { failpoint } from '../failpoints.js';
import {
  STRIPE_CALLS_TABLE,
  STRIPE_CALL_RETRY,
  STRIPE_EVENTS_TABLE,
  STRIPE_EVENT_RETRY,
  STRIPE_EVENT_WAIT,
  Stripe,
  applyStripeEvent,
  cancelRechargeTurnedOff,
  claimStripeCalls,
  claimStripeEvents,
  failureKind,
  markStripeEvent,
  meaningOf,
  readStripeCredentials,
  rechargeStillOn,
  recordRechargeAnswer,
  refundOf,
  stripeClient,
  waitStripeEvent,
  type ClaimedCall,
  type ClaimedStripeEvent,
  type EventMeaning,
  type PaymentSuccess,
  type RechargeAnswer,
  type RefundFacts,
} from '../funds/payments/index.js';
import { backoff } from '../backoff.js';
import { LeaseLost, commitFenced, recordFailure } from '../queue/engine/index.js';

export interface PaymentsLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface PaymentsWorkerOptions {
  /** unseals the Stripe API key (api/server-secret.ts): every serve and worker of a database shares it */
  serverSecret: Buffer;
  leaseSeconds: number;
  pollIntervalMs: number;
  log: PaymentsLog;
}

/**
 * The two payment queues of the engine, worked by one loop each: Stripe's events in
 * (claimed, settled under their objects' locks, marked under the claim's token) and
 * Tally's calls to Stripe out (claimed, called outside any transaction with the row's
 * Idempotency-Key, the answer recorded under the claim's token). Idle loops poll
 * (queue/engine/poller.ts).
 * `pool` is a function: the CLI's worker follows the database to a new pool.
 */
export class PaymentsWorker {
  private readonly poller: Poller;

  constructor(
    private readonly pool: () => Pool,
    private readonly options: PaymentsWorkerOptions,
  ) {
    this.poller = new Poller({ pollIntervalMs: options.pollIntervalMs, log: options.log });
  }

  start(): void {
    this.poller.start([
      { failed: 'stripe events: a step failed; retrying after the poll interval', round: () => this.settleNextEvent() },
      { failed: 'stripe calls: a step failed; retrying after the poll interval', round: () => this.callNext() },
    ]);
  }

  /** Stops claiming; the event or call in hand is finished and recorded. */
  async stop(): Promise<void> {
    await this.poller.stop();
  }

  /** One Stripe event: claimed, its meaning settled (after an API call it may need), marked. */
  private async settleNextEvent(): Promise<boolean> {
    const [claim] = await claimStripeEvents(this.pool(), 1, this.options.leaseSeconds);
    if (!claim) return false;
    const { log } = this.options;
    try {
      const parsed = JSON.parse(claim.payload.toString('utf8')) as { created?: number; data?: { object?: Record<string, unknown> } };
      let meaning: EventMeaning = meaningOf(claim.type, parsed.data?.object ?? {});
      if (meaning.kind === 'charge_refunded' && meaning.refunds === null)
        meaning = { ...meaning, refunds: await this.listRefunds(meaning.charge) };
      if (meaning.kind === 'payment_succeeded' && meaning.via === 'checkout_session' && meaning.grantId && !meaning.paymentMethod)
        meaning = await this.withPaymentMethod(meaning, claim);
      const created = typeof parsed.created === 'number' ? parsed.created : null;
      const outcome = await commitFenced(
        this.pool(),
        STRIPE_EVENTS_TABLE,
        { key: [claim.id], token: BigInt(claim.fencing_token) },
        async (tx) => {
          const effect = await applyStripeEvent(tx, meaning, { created });
          const written =
            effect.kind === 'wait'
              ? await waitStripeEvent(tx, claim, effect.reason, Math.round(backoff(waits(claim), STRIPE_EVENT_WAIT)))
              : await markStripeEvent(tx, claim, { state: effect.kind, reason: effect.reason });
          if (!written) throw new LeaseLost(`stripe event ${claim.id}`);
          return effect;
        },
      );
      if (outcome === 'lease_lost')
        log.warn({ event_id: claim.id }, 'stripe event settled after its lease ran out; another worker owns it now');
      else log.info({ event_id: claim.id, type: claim.type, outcome: outcome.kind, reason: outcome.reason }, 'stripe event settled');
    } catch (error) {
      const failed = await recordFailure(
        this.pool(),
        STRIPE_EVENTS_TABLE,
        STRIPE_EVENT_RETRY,
        { key: [claim.id], token: BigInt(claim.fencing_token) },
        { attempts: claim.attempts },
        messageOf(error),
      );
      log.warn({ event_id: claim.id, type: claim.type, err: error, next: failed.kind }, 'stripe event failed to settle');
    }
    return true;
  }

  /**
   * A Checkout Session's event carries no payment method, and a tenant who subscribed only to
   * checkout.session.completed (what Stripe's fulfilment guide asks for) would never have
   * its card learnt for auto-recharge: it is read from the session's payment intent, here,
   * outside any transaction. Stripe unreachable: the event is retried a few times; after
   * that the money is credited without the card (crediting never waits on it), and the
   * auto-recharge view says `no_payment_method` until a later payment teaches it.
   */
  private async withPaymentMethod(meaning: PaymentSuccess, claim: ClaimedStripeEvent): Promise<PaymentSuccess> {
    try {
      const intent = await (await this.client()).paymentIntents.retrieve(meaning.paymentIntent);
      const facts = intentOf(intent);
      return {
        ...meaning,
        paymentMethod: facts.payment_method,
        customer: meaning.customer ?? facts.customer,
        charge: meaning.charge ?? facts.latest_charge,
      };
    } catch (error) {
      if (claim.attempts < LEARN_CARD_ATTEMPTS) throw error;
      this.options.log.warn(
        { event_id: claim.id, payment_intent: meaning.paymentIntent, err: messageOf(error) },
        'could not read the payment method of a checkout from Stripe; the payment is credited without it',
      );
      return meaning;
    }
  }

  /** charge.refunded without its refunds (newer API versions do not include them): listed through the API. */
  private async listRefunds(charge: string): Promise<RefundFacts[]> {
    const stripe = await this.client();
    const refunds: RefundFacts[] = [];
    for await (const refund of stripe.refunds.list({ charge, limit: 100 })) {
      const facts = refundOf(refund as unknown as Record<string, unknown>);
      if (facts) refunds.push(facts);
    }
    return refunds;
  }

  private async client(): Promise<Stripe> {
    const credentials = await readStripeCredentials(this.pool(), this.options.serverSecret);
    if (!credentials) throw new Error('Stripe is not configured: PUT /v1/payment-settings/stripe');
    return stripeClient(credentials);
  }

  /**
   * One call to Stripe: a recharge's payment intent, with the grant's Idempotency-Key and
   * the parameters fixed when it was decided. Killed at any instant, the next claim makes
   * the same call under the same key, and Stripe answers with the first payment intent.
   */
  private async callNext(): Promise<boolean> {
    const [claim] = await claimStripeCalls(this.pool(), 1, this.options.leaseSeconds);
    if (!claim) return false;
    const { log } = this.options;
    if (!(await rechargeStillOn(this.pool(), claim.wallet_id))) {
      const canceled = await commitFenced(this.pool(), STRIPE_CALLS_TABLE, fenced(claim), (tx) => cancelRechargeTurnedOff(tx, claim));
      if (canceled === true) {
        log.info({ call_id: claim.id, grant_id: claim.grant_id }, 'recharge canceled before its call: auto-recharge was turned off');
        return true;
      }
      if (canceled === 'lease_lost') return true;
    }
    let answer: RechargeAnswer;
    try {
      const stripe = await this.client();
      failpoint('payments.before_call');
      const intent = await stripe.paymentIntents.create(claim.params, { idempotencyKey: claim.idempotency_key });
      failpoint('payments.after_call');
      answer = { kind: 'intent', intent: intentOf(intent) };
    } catch (error) {
      if (failureKind(error) === 'definitive') {
        answer = { kind: 'refused', code: codeOf(error), paymentIntent: paymentIntentOf(error) };
      } else {
        const failed = await recordFailure(
          this.pool(),
          STRIPE_CALLS_TABLE,
          STRIPE_CALL_RETRY,
          fenced(claim),
          { attempts: claim.attempts + 1, ageMs: Date.now() - new Date(claim.created_at).getTime() },
          messageOf(error),
        );
        log.warn(
          { call_id: claim.id, grant_id: claim.grant_id, err: messageOf(error), next: failed.kind },
          'stripe call failed; retried with the same Idempotency-Key',
        );
        return true;
      }
    }
    try {
      const outcome = await commitFenced(this.pool(), STRIPE_CALLS_TABLE, fenced(claim), (tx) => recordRechargeAnswer(tx, claim, answer));
      log.info({ call_id: claim.id, grant_id: claim.grant_id, outcome }, 'recharge answered');
    } catch (error) {
      // Not recorded: the lease lapses and the call is made again, with the same key.
      log.warn({ call_id: claim.id, err: error }, 'could not record a recharge answer; it is asked again once its lease runs out');
    }
    return true;
  }
}

/** Attempts at reading a checkout's payment method before its payment is credited without it. */
const LEARN_CARD_ATTEMPTS = 4;

function fenced(claim: ClaimedCall) {
  return { key: [claim.id], token: BigInt(claim.fencing_token) };
}

/** How many times the event waited so far, for its backoff (from when it started waiting). */
function waits(claim: ClaimedStripeEvent): number {
  if (!claim.waiting_since) return 1;
  const seconds = (Date.now() - new Date(claim.waiting_since).getTime()) / 1000;
  return Math.max(1, Math.floor(Math.log2(Math.max(1, seconds))) + 1);
}

function intentOf(intent: Stripe.PaymentIntent) {
  const id = (value: unknown) =>
    typeof value === 'string' ? value : value && typeof value === 'object' && 'id' in value ? String((value as { id: unknown }).id) : null;
  return {
    id: intent.id,
    status: intent.status,
    amount_received: intent.amount_received,
    currency: intent.currency,
    customer: id(intent.customer),
    payment_method: id(intent.payment_method),
    latest_charge: id(intent.latest_charge),
  };
}

function codeOf(error: unknown): string {
  if (error instanceof Stripe.errors.StripeError) return error.decline_code ?? error.code ?? error.type;
  return 'refused';
}

function paymentIntentOf(error: unknown): string | null {
  if (error instanceof Stripe.errors.StripeError) {
    const raw = error.raw as { payment_intent?: { id?: string } } | undefined;
    return raw?.payment_intent?.id ?? null;
  }
  return null;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message.slice(0, 1000) : String(error).slice(0, 1000);
}
