import Stripe from 'stripe';

/** A Stripe event as Stripe sends it (stripe-event.json's envelope around an object). */
export interface StripeEvent {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  data: { object: Record<string, unknown> };
  livemode: boolean;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
}

export function stripeEvent(type: string, object: Record<string, unknown>, id: string, livemode = false): StripeEvent {
  return {
    id,
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: Math.floor(Date.now() / 1000),
    data: { object },
    livemode,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}

const signer = new Stripe('sk_test_signing_only', { telemetry: false });

/** A valid Stripe-Signature for `payload`, made by Stripe's own SDK (generateTestHeaderString). */
export function stripeSignature(payload: string, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return signer.webhooks.generateTestHeaderString({ payload, secret, timestamp });
}

/** Posts an event to Tally's webhook endpoint (`url` is the server's base URL), signed with `secret`. */
export async function sendStripeEvent(
  url: string,
  event: StripeEvent | string,
  secret: string,
  options: { timestamp?: number; signature?: string } = {},
): Promise<{ status: number; body: unknown }> {
  const payload = typeof event === 'string' ? event : JSON.stringify(event);
  const response = await fetch(`${url}/v1/payments/stripe/webhook`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'stripe-signature': options.signature ?? stripeSignature(payload, secret, options.timestamp),
    },
    body: payload,
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: response.status, body };
}
