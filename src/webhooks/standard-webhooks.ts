import type { IncomingHttpHeaders } from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { invalidSignature } from './errors.js';

/**
 * Standard Webhooks verification with the reference `standardwebhooks` package:
 * HMAC-SHA256 over id.timestamp.body, timing-safe comparison, 5-minute tolerance
 * both ways. Tried against every active secret, so a rotation never drops events.
 * Returns the `webhook-id` header, the provider's event id.
 */
export function verifyStandardWebhook(secrets: readonly string[], raw: Buffer, headers: IncomingHttpHeaders): string {
  const id = single(headers['webhook-id']);
  const timestamp = single(headers['webhook-timestamp']);
  const signature = single(headers['webhook-signature']);
  if (!id || !timestamp || !signature) throw invalidSignature('webhook-id, webhook-timestamp and webhook-signature headers are required');
  if (!/^\d{1,12}$/.test(timestamp)) throw invalidSignature('webhook-timestamp must be unix seconds');
  const signed = { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature };
  let reason = 'no active secret';
  for (const secret of secrets) {
    try {
      new Webhook(secret).verify(raw, signed, { jsonParse: false });
      return id;
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      reason = error.message;
    }
  }
  throw invalidSignature(reason);
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
