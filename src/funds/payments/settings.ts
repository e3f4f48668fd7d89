import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { Queryable } from '../../db/pool.js';

/**
 * The operator's Stripe account (PUT /v1/payment-settings/stripe). The API key is
 * write-only: never returned, never logged, and stored sealed with AES-256-GCM under a
 * key derived from the server's secret (TALLY_SECRET_KEY, api/server-secret.ts), which
 * never enters the database — a dump alone reveals no key. Every `serve` and `worker`
 * of one database must share that secret, as for stored idempotent answers.
 */

export interface PaymentSettings {
  livemode: boolean;
  webhookSecrets: string[];
  baseUrl: string | null;
  apiKeyLast4: string;
  updatedAt: Date;
}

export interface StripeCredentials extends PaymentSettings {
  apiKey: string;
}

export class SettingsUnsealable extends Error {
  constructor() {
    super(
      'the Stripe API key was sealed with another server secret: give every tally serve and worker the same TALLY_SECRET_KEY, or PUT the payment settings again',
    );
    this.name = 'SettingsUnsealable';
  }
}

/** sk_live_… / rk_live_… is live mode; anything else (sk_test_…, rk_test_…) test mode. */
export function isLiveKey(apiKey: string): boolean {
  return /^(sk|rk)_live_/.test(apiKey);
}

function sealingKey(serverSecret: Buffer): Buffer {
  return createHmac('sha256', serverSecret).update('tally-payment-settings-v1').digest();
}

export function sealApiKey(apiKey: string, serverSecret: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(serverSecret), iv);
  const data = Buffer.concat([cipher.update(apiKey, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64');
}

export function unsealApiKey(sealed: string, serverSecret: Buffer): string {
  const packed = Buffer.from(sealed, 'base64');
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(serverSecret), packed.subarray(0, 12));
    decipher.setAuthTag(packed.subarray(12, 28));
    return Buffer.concat([decipher.update(packed.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    throw new SettingsUnsealable();
  }
}

export async function savePaymentSettings(
  db: Queryable,
  serverSecret: Buffer,
  settings: { apiKey: string; webhookSecrets: string[]; baseUrl: string | null },
): Promise<PaymentSettings> {
  const result = await db.query<SettingsRow>(
    `insert into payment_settings (processor, api_key_sealed, api_key_last4, livemode, webhook_secrets, base_url, updated_at)
     values ('stripe', $1, $2, $3, $4, $5, now())
     on conflict on constraint payment_settings_pkey do update
       set api_key_sealed = excluded.api_key_sealed, api_key_last4 = excluded.api_key_last4, livemode = excluded.livemode,
           webhook_secrets = excluded.webhook_secrets, base_url = excluded.base_url, updated_at = now()
     returning *`,
    [
      sealApiKey(settings.apiKey, serverSecret),
      settings.apiKey.slice(-4),
      isLiveKey(settings.apiKey),
      settings.webhookSecrets,
      settings.baseUrl,
    ],
  );
  return settingsOf(result.rows[0]!);
}

interface SettingsRow {
  api_key_sealed: string;
  api_key_last4: string;
  livemode: boolean;
  webhook_secrets: string[];
  base_url: string | null;
  updated_at: Date;
}

function settingsOf(row: SettingsRow): PaymentSettings {
  return {
    livemode: row.livemode,
    webhookSecrets: row.webhook_secrets,
    baseUrl: row.base_url,
    apiKeyLast4: row.api_key_last4,
    updatedAt: row.updated_at,
  };
}

/** The settings without the key (webhook verification, views); null when Stripe is not configured. */
export async function readPaymentSettings(db: Queryable): Promise<PaymentSettings | null> {
  const result = await db.query<SettingsRow>({
    name: 'read_payment_settings',
    text: `select * from payment_settings where processor = 'stripe'`,
  });
  const row = result.rows[0];
  return row ? settingsOf(row) : null;
}

/** The settings with the key unsealed, for a call to Stripe; null when not configured. */
export async function readStripeCredentials(db: Queryable, serverSecret: Buffer): Promise<StripeCredentials | null> {
  const result = await db.query<SettingsRow>({
    name: 'read_payment_settings',
    text: `select * from payment_settings where processor = 'stripe'`,
  });
  const row = result.rows[0];
  return row ? { ...settingsOf(row), apiKey: unsealApiKey(row.api_key_sealed, serverSecret) } : null;
}
