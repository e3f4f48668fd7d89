import { createHash } from 'node:crypto';
import { stripeClient } from './stripe-client.js';

/**
 * Which Stripe account an API key belongs to, as its customers are scoped
 * (migration 0030): Stripe's own answer to GET /v1/account when it gives one, so a key
 * rolled in the same account keeps the tenants' customers and cards. When Stripe does not
 * say (a restricted key without that permission, no answer in time), a fingerprint of the
 * key stands in: never wrongly the same as another account's, at worst a new customer at
 * the tenant's next checkout. Asked when the key is put, outside any transaction.
 */
export const KEY_ACCOUNT_TIMEOUT_MS = 5_000;

export async function keyAccount(credentials: { apiKey: string; baseUrl: string | null }): Promise<string> {
  try {
    const account = await stripeClient(credentials, KEY_ACCOUNT_TIMEOUT_MS).accounts.retrieveCurrent();
    if (typeof account.id === 'string' && /^acct_[A-Za-z0-9]+$/.test(account.id)) return account.id;
  } catch {
    // Stripe did not say: the fingerprint below.
  }
  return keyFingerprint(credentials.apiKey);
}

export function keyFingerprint(apiKey: string): string {
  return `key:${createHash('sha256').update(apiKey).digest('hex').slice(0, 32)}`;
}
