import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Stripe from 'stripe';
import type { Api } from './client.js';
import type { StripeDelivery } from './ops.js';
import { Random } from './random.js';
import { ADMIN_TOKEN, ROOT } from './world.js';

/**
 * Stripe's side of a run: the local Stripe (the one `tally demo` and the tests use, loaded
 * from dist/ at run time like the embedded PostgreSQL: a stand-in for Stripe, not Tally's
 * money code), Tally's payment settings pointing at it, and Stripe's events sent to Tally's
 * endpoint signed with Stripe's own SDK, duplicated, shuffled and forged as an op says.
 */

export const STRIPE_KEY = 'sk_test_tally_sim_0123456789abcdef';
export const STRIPE_SECRET = 'whsec_c2ltdWxhdGlvbi1zdHJpcGUtc2lnbmluZy1zZWNyZXQ=';
const FORGERY_SECRET = 'whsec_bm90LXN0cmlwZS1hdC1hbGwtbm90LXN0cmlwZS1hdC1hbGw=';

export interface StripeEvent {
  id: string;
  type: string;
  data: { object: Record<string, unknown> };
}

type Events = Promise<StripeEvent[]>;

/** The part of dist/simulator/stripe's LocalStripe the simulation uses. */
export interface LocalStripe {
  url: string;
  cards: Map<string, 'succeed' | 'decline' | 'requires_action' | 'processing'>;
  sessions: Map<string, Record<string, unknown>>;
  refunds: Map<string, Record<string, unknown>>;
  disputes: Map<string, Record<string, unknown>>;
  completeCheckout(sessionId: string, options: { paymentMethod?: string; send?: boolean }): Events;
  expireCheckout(sessionId: string, options: { send?: boolean }): Events;
  refund(paymentIntentId: string, amount: number, options: { status?: string; send?: boolean }): Events;
  updateRefund(refundId: string, status: string, options: { send?: boolean }): Events;
  openDispute(paymentIntentId: string, amount: number, options: { send?: boolean }): Events;
  closeDispute(disputeId: string, status: 'won' | 'lost', options: { send?: boolean }): Events;
  failNext(count: number, path?: RegExp, status?: number): void;
  hangNext(count: number, path?: RegExp): void;
  dropAfterCommitNext(count: number, path?: RegExp): void;
  clearFaults(): void;
  releaseHung(): void;
  close(): Promise<void>;
}

export async function startLocalStripe(): Promise<LocalStripe> {
  const module = (await import(pathToFileURL(join(ROOT, 'dist', 'simulator', 'stripe', 'index.js')).href)) as {
    LocalStripe: { start(options: object): Promise<LocalStripe> };
  };
  return module.LocalStripe.start({});
}

/** Tally's payment settings: the key, the webhook secret, the local Stripe's URL. */
export async function configurePayments(api: Api, stripe: LocalStripe): Promise<void> {
  const reply = await api.call('PUT', '/v1/payment-settings/stripe', ADMIN_TOKEN, {
    api_key: STRIPE_KEY,
    webhook_secrets: [STRIPE_SECRET],
    base_url: stripe.url,
  });
  if (reply.status !== 200) throw new Error(`payment settings: ${reply.status} ${JSON.stringify(reply.body)}`);
}

const signer = new Stripe('sk_test_signing_only', { telemetry: false });

/** A Stripe-Signature header for `payload` made now, by Stripe's SDK. */
export function stripeSignature(payload: string, forged = false): string {
  return signer.webhooks.generateTestHeaderString({ payload, secret: forged ? FORGERY_SECRET : STRIPE_SECRET });
}

/**
 * Sends an op's events as its delivery says: shuffled, each `copies` times, a forged copy of
 * the first. Every genuine delivery must be answered 200 (Stripe retries anything else, and
 * a fault's interruption is retried by the client); a forged one 401.
 * Returns what went wrong, one line each.
 */
export async function sendStripeEvents(api: Api, events: StripeEvent[], delivery: StripeDelivery): Promise<string[]> {
  const random = new Random(delivery.order);
  const chosen = delivery.onlyCompleted ? events.filter((e) => e.type === 'checkout.session.completed') : events;
  const sends: { event: StripeEvent; forged: boolean }[] = [];
  for (const event of chosen) for (let copy = 0; copy < delivery.copies; copy++) sends.push({ event, forged: false });
  if (delivery.forged && chosen.length > 0) sends.push({ event: chosen[0]!, forged: true });
  const wrong: string[] = [];
  await Promise.all(
    random.shuffle(sends).map(async ({ event, forged }, index) => {
      // a little spread, so that copies overlap without all landing at once
      await new Promise((resolve) => setTimeout(resolve, index * 5));
      const payload = JSON.stringify(event);
      const reply = await api.stripe(payload, () => stripeSignature(payload, forged));
      const expected = forged ? 401 : 200;
      if (reply.status !== expected)
        wrong.push(`${forged ? 'a forged ' : ''}${event.type} ${event.id}: ${reply.status} ${JSON.stringify(reply.body)}`);
    }),
  );
  return wrong;
}
