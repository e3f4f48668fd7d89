import type { Queryable } from '../../db/pool.js';
import { isSealed, openSecrets, openText, opensAll, sealClear, sealSecret, sealText } from '../../sealed-secrets.js';

/**
 * The operator's Stripe account (PUT /v1/payment-settings/stripe). The API key is
 * write-only: never returned, never logged, and stored sealed with AES-256-GCM under a
 * key derived from the server's secret (TALLY_SECRET_KEY, api/server-secret.ts), which
 * never enters the database — a dump alone reveals no key. Every `serve` and `worker`
 * of one database must share that secret, as for stored idempotent answers. The webhook
 * secrets are sealed the same way, each on its own (sealed-secrets.ts): a dump is not
 * enough to sign an event either.
 */

export interface PaymentSettings {
  livemode: boolean;
  /** the Stripe account (acct_…) whose Connect events are accepted; null: every event naming an account is refused */
  account: string | null;
  /** the account the API key belongs to, which scopes the tenants' customers (key-account.ts, migration 0030) */
  keyAccount: string;
  /**
   * As stored: each sealed, or clear when written before migration 0027 and not sealed
   * yet (both verify). For counting; openWebhookSecrets gives the secrets themselves.
   */
  storedWebhookSecrets: string[];
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

/** The API key's form predates the webhook secrets': base64 without a prefix, always sealed. */
export function sealApiKey(apiKey: string, serverSecret: Buffer): string {
  return sealText(apiKey, 'stripe_api_key', serverSecret);
}

export function unsealApiKey(sealed: string, serverSecret: Buffer): string {
  const apiKey = openText(sealed, 'stripe_api_key', serverSecret);
  if (apiKey === null) throw new SettingsUnsealable();
  return apiKey;
}

export async function savePaymentSettings(
  db: Queryable,
  serverSecret: Buffer,
  settings: { apiKey: string; webhookSecrets: string[]; baseUrl: string | null; account: string | null; keyAccount: string },
): Promise<PaymentSettings> {
  const result = await db.query<SettingsRow>(
    `insert into payment_settings (processor, api_key_sealed, api_key_last4, livemode, webhook_secrets, base_url, account, key_account, updated_at)
     values ('stripe', $1, $2, $3, $4, $5, $6, $7, now())
     on conflict on constraint payment_settings_pkey do update
       set api_key_sealed = excluded.api_key_sealed, api_key_last4 = excluded.api_key_last4, livemode = excluded.livemode,
           webhook_secrets = excluded.webhook_secrets, base_url = excluded.base_url, account = excluded.account,
           key_account = excluded.key_account, updated_at = now()
     returning *`,
    [
      sealApiKey(settings.apiKey, serverSecret),
      settings.apiKey.slice(-4),
      isLiveKey(settings.apiKey),
      settings.webhookSecrets.map((secret) => sealSecret(secret, 'stripe_webhook_secret', serverSecret)),
      settings.baseUrl,
      settings.account,
      settings.keyAccount,
    ],
  );
  return settingsOf(result.rows[0]!);
}

interface SettingsRow {
  api_key_sealed: string;
  api_key_last4: string;
  livemode: boolean;
  account: string | null;
  key_account: string;
  webhook_secrets: string[];
  base_url: string | null;
  updated_at: Date;
}

function settingsOf(row: SettingsRow): PaymentSettings {
  return {
    livemode: row.livemode,
    account: row.account,
    keyAccount: row.key_account,
    storedWebhookSecrets: row.webhook_secrets,
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

/**
 * The account the stored key belongs to when `apiKey` is that key (put again, with other
 * secrets or a base URL): kept, so customers made before migration 0030 stay the tenants'.
 * Null when another key, or nothing, is stored.
 */
export async function keptKeyAccount(db: Queryable, serverSecret: Buffer, apiKey: string): Promise<string | null> {
  const result = await db.query<SettingsRow>(`select * from payment_settings where processor = 'stripe'`);
  const row = result.rows[0];
  if (!row) return null;
  return openText(row.api_key_sealed, 'stripe_api_key', serverSecret) === apiKey ? row.key_account : null;
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

/** The webhook secrets that verify Stripe's signatures, opened. Throws SecretUnsealable under another server secret. */
export function openWebhookSecrets(settings: PaymentSettings, serverSecret: Buffer): string[] {
  return openSecrets(settings.storedWebhookSecrets, 'stripe_webhook_secret', serverSecret, 'a Stripe webhook secret');
}

/**
 * Whether this server secret opens what the settings hold sealed (true when Stripe is not
 * configured): a process whose secret differs must not seal anything more (see
 * sealClearWebhookSecrets).
 */
export async function opensPaymentSettings(db: Queryable, serverSecret: Buffer): Promise<boolean> {
  const result = await db.query<SettingsRow>(`select * from payment_settings where processor = 'stripe'`);
  const row = result.rows[0];
  if (!row) return true;
  return openText(row.api_key_sealed, 'stripe_api_key', serverSecret) !== null && opensAll(row.webhook_secrets, 'stripe_webhook_secret', serverSecret);
}

/**
 * Seals the webhook secrets still stored in the clear (written before migration 0027,
 * which could not seal them: the key is not in the database); returns how many. The
 * write is conditional on the value read, so a PUT committed in between (which sealed its
 * own) is never overwritten; run again at the next start if it lost that race.
 */
export async function sealClearWebhookSecrets(db: Queryable, serverSecret: Buffer): Promise<number> {
  const result = await db.query<{ webhook_secrets: string[] }>(`select webhook_secrets from payment_settings where processor = 'stripe'`);
  const stored = result.rows[0]?.webhook_secrets;
  const clear = stored?.filter((value) => !isSealed(value)).length ?? 0;
  if (!stored || clear === 0) return 0;
  const sealed = await db.query(
    `update payment_settings set webhook_secrets = $1 where processor = 'stripe' and webhook_secrets = $2::text[]`,
    [sealClear(stored, 'stripe_webhook_secret', serverSecret), stored],
  );
  return sealed.rowCount === 1 ? clear : 0;
}
