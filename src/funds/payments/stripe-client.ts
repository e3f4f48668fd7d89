import Stripe from 'stripe';
import type { StripeCredentials } from './settings.js';

/**
 * The official SDK's client for the configured account, pointed at `base_url` (Stripe's
 * API when unset; the local Stripe in tests and `tally demo`) through its host, port and
 * protocol options. The SDK's own network retries are off: a call that fails is retried
 * by its queue (with the same Idempotency-Key), and the worker decides when.
 */
export const STRIPE_TIMEOUT_MS = 10_000;

export function stripeClient(credentials: Pick<StripeCredentials, 'apiKey' | 'baseUrl'>, timeoutMs = STRIPE_TIMEOUT_MS): Stripe {
  const options: ConstructorParameters<typeof Stripe>[1] = { maxNetworkRetries: 0, timeout: timeoutMs, telemetry: false };
  if (credentials.baseUrl) {
    const url = new URL(credentials.baseUrl);
    options.protocol = url.protocol === 'http:' ? 'http' : 'https';
    options.host = url.hostname;
    options.port = url.port || (url.protocol === 'http:' ? 80 : 443);
  }
  return new Stripe(credentials.apiKey, options);
}

/**
 * What a failed call means for the work that made it: 'definitive' — Stripe answered
 * and refused (a 4xx other than 409/429: a declined card, invalid parameters), so
 * retrying the same call would get the same answer; 'retry' — no answer, a timeout, a
 * 5xx, 409 (the same Idempotency-Key still in flight) or 429: the same call, with the
 * same key, is safe to make again.
 */
export function failureKind(error: unknown): 'definitive' | 'retry' {
  if (error instanceof Stripe.errors.StripeError) {
    const status = error.statusCode;
    if (status !== undefined && status >= 400 && status < 500 && status !== 409 && status !== 429) return 'definitive';
  }
  return 'retry';
}

export { Stripe };
