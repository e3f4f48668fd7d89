import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * Endpoint secrets and signatures, per Standard Webhooks: a secret is `whsec_` + base64 of
 * 32 random bytes; a signature is `v1,<base64 HMAC-SHA256 of id.timestamp.body>`, made by
 * the `standardwebhooks` package itself so that any receiver using it verifies ours.
 */

export function newEndpointSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The webhook-signature header: one signature per active secret, space-separated. During a
 * rotation's grace period both the new and the old secret sign, so a receiver still holding
 * the old one keeps verifying until it switches (any one valid signature passes).
 */
export function signatureHeader(secrets: readonly string[], messageId: string, timestamp: Date, body: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(messageId, timestamp, body)).join(' ');
}
