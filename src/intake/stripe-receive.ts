import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import Stripe from 'stripe';
import type { Pool } from '../db/pool.js';
import {
  openWebhookSecrets,
  readPaymentSettings,
  refusalMessage,
  storeStripeEvent,
  stripeEventRefusal,
  type StoreOutcome,
} from '../funds/payments/index.js';
import { WebhookRefused } from '../webhooks/errors.js';
import { parseStripeSignature, rebuiltStripeSignature } from './stripe-signature.js';

/** Stripe's own tolerance for a signature's timestamp, both ways (seconds). */
export const STRIPE_TOLERANCE_SECONDS = 300;

/** Only verification is used: the SDK's webhooks helper needs no key or network. */
const verifier = new Stripe('sk_test_verification_only', { telemetry: false });

export interface StripeIntakeResult {
  status: 'accepted' | 'already_accepted';
  eventId: string;
}

/**
 * The receipt of a Stripe event (CONTRACT.md "Payments (Stripe)"): the signature checked
 * by Stripe's SDK on the raw bytes with each configured secret (rotation) and a 300 s
 * tolerance — bad, missing or stale: 401, nothing stored; then stored once, before the
 * 200 (the payments worker settles it). Same id, other bytes: 409, never processed. An
 * event that names a Stripe account other than the configured one (Connect), or whose
 * livemode is not the API key's mode, is stored as refused and answered 400
 * (funds/payments/event-refusal.ts). `serverSecret` opens the sealed webhook secrets.
 */
export async function receiveStripeEvent(
  pool: Pool,
  serverSecret: Buffer,
  raw: Buffer,
  headers: IncomingHttpHeaders,
): Promise<StripeIntakeResult> {
  const settings = await readPaymentSettings(pool);
  const header = headers['stripe-signature'];
  const signature = Array.isArray(header) ? header[0] : header;
  if (!settings) throw new WebhookRefused(401, 'invalid_signature', 'Stripe is not configured here: PUT /v1/payment-settings/stripe first');
  if (!signature) throw new WebhookRefused(401, 'invalid_signature', 'the Stripe-Signature header is missing');
  const parsed = parseStripeSignature(signature);
  if (!parsed || !Number.isSafeInteger(parsed.timestamp)) {
    throw new WebhookRefused(401, 'invalid_signature', 'the Stripe-Signature header has no timestamp (t=<unix seconds>)');
  }
  const now = Date.now();
  // Stripe's SDK refuses a timestamp too old; one too far ahead is refused here too (a
  // clock's skew, both ways). The SDK verifies the header rebuilt from this same reading
  // (stripe-signature.ts), so the `t` checked here is the `t` it checks the signature over.
  if (parsed.timestamp - now / 1000 > STRIPE_TOLERANCE_SECONDS) {
    throw new WebhookRefused(401, 'invalid_signature', `the signature's timestamp is outside the ${STRIPE_TOLERANCE_SECONDS} s tolerance`);
  }
  const event = verified(raw, rebuiltStripeSignature(parsed), openWebhookSecrets(settings, serverSecret), now);
  const id = typeof event.id === 'string' ? event.id : null;
  const type = typeof event.type === 'string' ? event.type : null;
  const created = typeof event.created === 'number' && Number.isSafeInteger(event.created) ? event.created : null;
  const object = event.data && typeof event.data === 'object' ? (event.data as { object?: unknown }).object : undefined;
  if (
    !id ||
    id.length > 255 ||
    !type ||
    type.length > 255 ||
    typeof event.livemode !== 'boolean' ||
    created === null ||
    !object ||
    typeof object !== 'object'
  ) {
    throw new WebhookRefused(
      400,
      'invalid_payload',
      'a Stripe event has a string id (at most 255 characters), a type, livemode, created and data.object',
    );
  }
  const objectId = typeof (object as { id?: unknown }).id === 'string' ? ((object as { id: string }).id as string) : null;
  const facts = { livemode: event.livemode, account: event.account };
  const refused = stripeEventRefusal(facts, settings);
  const outcome: StoreOutcome = await storeStripeEvent(pool, {
    id,
    type,
    livemode: event.livemode,
    objectId,
    payload: raw,
    payloadHash: createHash('sha256').update(raw).digest(),
    created,
    source: 'webhook',
    refused,
  });
  switch (outcome.kind) {
    case 'accepted':
      return { status: 'accepted', eventId: id };
    case 'duplicate':
      return { status: 'already_accepted', eventId: id };
    case 'conflict':
      throw new WebhookRefused(
        409,
        'event_key_conflict',
        `event ${id} was received before with other bytes; this delivery is not processed`,
      );
    case 'refused':
      // A repeat answers the refusal stored the first time, even if the settings changed since.
      throw new WebhookRefused(
        400,
        outcome.reason,
        outcome.reason === refused
          ? refusalMessage(id, refused, facts, settings)
          : `event ${id} was refused when first received (${outcome.reason}): stored as refused, never applied`,
      );
  }
}

/** The event, verified with any of the secrets; 401 when none verifies (bad, missing or stale). */
function verified(
  raw: Buffer,
  signature: string,
  secrets: readonly string[],
  receivedAt: number,
): Record<string, unknown> & { livemode?: unknown; data?: unknown; account?: unknown } {
  let reason = 'no webhook secret is configured';
  for (const secret of secrets) {
    try {
      return verifier.webhooks.constructEvent(raw, signature, secret, STRIPE_TOLERANCE_SECONDS, undefined, receivedAt) as unknown as Record<
        string,
        unknown
      >;
    } catch (error) {
      if (!(error instanceof Stripe.errors.StripeSignatureVerificationError)) {
        throw new WebhookRefused(400, 'invalid_payload', 'the body is not a JSON Stripe event');
      }
      reason = error.message.includes('Timestamp outside the tolerance zone')
        ? `the signature's timestamp is outside the ${STRIPE_TOLERANCE_SECONDS} s tolerance`
        : 'no configured webhook secret verifies the Stripe-Signature';
    }
  }
  throw new WebhookRefused(401, 'invalid_signature', reason);
}
