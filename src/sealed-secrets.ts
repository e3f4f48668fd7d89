import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * Credentials Tally keeps in the database sealed with AES-256-GCM under keys derived from
 * the server's secret (TALLY_SECRET_KEY or the data folder's file, api/server-secret.ts),
 * which never enters the database: a dump alone reveals none of them, so it is not enough
 * to sign a provider's or Stripe's events (issue 33, item 9). One derived key per use, so a
 * value sealed for one use never opens as another.
 *
 * Webhook signing secrets are sealed one by one, each stored as `sealed:v1:` + base64 of
 * (iv, tag, ciphertext). A stored value without that prefix is a secret written in the
 * clear (before migration 0027, or by hand in SQL): it still verifies, and `tally serve`
 * and `tally worker` seal it at start (cli/seal-at-start.ts). No secret Tally ever accepted
 * can start with the prefix: ':' is outside base64, and a secret is `whsec_` + base64.
 */

export type SealedUse = 'provider_webhook_secret' | 'stripe_webhook_secret' | 'stripe_api_key';

export const SEALED_PREFIX = 'sealed:v1:';

export class SecretUnsealable extends Error {
  constructor(what: string) {
    super(
      `${what} was sealed with another server secret: give every tally serve and worker the same TALLY_SECRET_KEY (or the same data folder), or set it again through the API`,
    );
    this.name = 'SecretUnsealable';
  }
}

/** The derived key of one use. The Stripe API key's label predates the others (rows sealed with it exist). */
function keyFor(use: SealedUse, serverSecret: Buffer): Buffer {
  const label = use === 'stripe_api_key' ? 'tally-payment-settings-v1' : `tally-${use}-v1`;
  return createHmac('sha256', serverSecret).update(label).digest();
}

/** base64 of iv (12 bytes), tag (16 bytes), ciphertext. */
export function sealText(text: string, use: SealedUse, serverSecret: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(use, serverSecret), iv);
  const data = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64');
}

/** The text sealed by sealText; null when this server secret (or this use) did not seal it. */
export function openText(sealed: string, use: SealedUse, serverSecret: Buffer): string | null {
  const packed = Buffer.from(sealed, 'base64');
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyFor(use, serverSecret), packed.subarray(0, 12));
    decipher.setAuthTag(packed.subarray(12, 28));
    return Buffer.concat([decipher.update(packed.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

export function isSealed(stored: string): boolean {
  return stored.startsWith(SEALED_PREFIX);
}

export function sealSecret(secret: string, use: SealedUse, serverSecret: Buffer): string {
  return SEALED_PREFIX + sealText(secret, use, serverSecret);
}

/** Stored secrets as they verify: a sealed one opened, a clear one as it is. Throws SecretUnsealable. */
export function openSecrets(stored: readonly string[], use: SealedUse, serverSecret: Buffer, what: string): string[] {
  return stored.map((value) => {
    if (!isSealed(value)) return value;
    const opened = openText(value.slice(SEALED_PREFIX.length), use, serverSecret);
    if (opened === null) throw new SecretUnsealable(what);
    return opened;
  });
}

/** Each clear one sealed; sealed ones kept as they are (order kept: it means nothing, but a reader may compare). */
export function sealClear(stored: readonly string[], use: SealedUse, serverSecret: Buffer): string[] {
  return stored.map((value) => (isSealed(value) ? value : sealSecret(value, use, serverSecret)));
}

/** Whether this server secret opens every sealed value of `stored` (true when none is sealed). */
export function opensAll(stored: readonly string[], use: SealedUse, serverSecret: Buffer): boolean {
  return stored.every((value) => !isSealed(value) || openText(value.slice(SEALED_PREFIX.length), use, serverSecret) !== null);
}
