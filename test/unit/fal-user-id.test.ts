import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ProviderRow } from '../../src/catalog/providers.js';
import { WebhookRefused } from '../../src/webhooks/errors.js';
import { falAdapter } from '../../src/webhooks/adapters/fal.js';

/**
 * fal signs every customer's webhooks with the same keys: a valid signature proves the
 * webhook came from fal, not that it is for this operator's account. With `user_id`
 * set, only webhooks fal signed for that user are taken.
 */
const sample = readFileSync(new URL('../fixtures/providers/fal-webhook-completed.json', import.meta.url), 'utf8');
const { publicKey, privateKey } = generateKeyPairSync('ed25519');

function falProvider(userId: string | null): ProviderRow {
  return {
    name: 'fal',
    kind: 'fal',
    secrets: [],
    jwks: { keys: [publicKey.export({ format: 'jwk' })] },
    api_key: 'fal-key',
    base_url: null,
    user_id: userId,
    policies: {},
    created_at: new Date(),
    updated_at: new Date(),
  };
}

/** A delivery fal really signed (the shared JWKS) for `userId`. */
function signedFor(userId: string) {
  const requestId = (JSON.parse(sample) as { request_id: string }).request_id;
  const timestamp = String(Math.floor(Date.now() / 1000));
  const digest = createHash('sha256').update(sample).digest('hex');
  const signature = sign(null, Buffer.from(`${requestId}\n${userId}\n${timestamp}\n${digest}`), privateKey).toString('hex');
  return {
    raw: Buffer.from(sample),
    headers: {
      'x-fal-webhook-request-id': requestId,
      'x-fal-webhook-user-id': userId,
      'x-fal-webhook-timestamp': timestamp,
      'x-fal-webhook-signature': signature,
    },
  };
}

function outcome(provider: ProviderRow, delivery: ReturnType<typeof signedFor>): string {
  try {
    falAdapter.receive(provider, delivery.raw, delivery.headers);
    return 'accepted';
  } catch (error) {
    if (error instanceof WebhookRefused) return `${error.status} ${error.code}`;
    throw error;
  }
}

describe('fal user_id', () => {
  it("accepts a webhook fal signed for the operator's user", () => {
    expect(outcome(falProvider('user_operator'), signedFor('user_operator'))).toBe('accepted');
  });

  it("refuses a validly signed webhook for another fal user as 401 invalid_signature", () => {
    expect(outcome(falProvider('user_operator'), signedFor('user_someone_else'))).toBe('401 invalid_signature');
    // Case and surrounding spaces are not the same user.
    expect(outcome(falProvider('user_operator'), signedFor('USER_OPERATOR'))).toBe('401 invalid_signature');
  });

  it('without a user_id set, accepts any user fal signed for (the documented risk)', () => {
    expect(outcome(falProvider(null), signedFor('user_someone_else'))).toBe('accepted');
  });

  it('refuses a delivery without the user header whether or not user_id is set', () => {
    const { 'x-fal-webhook-user-id': _, ...headers } = signedFor('user_operator').headers;
    const delivery = { raw: Buffer.from(sample), headers } as unknown as ReturnType<typeof signedFor>;
    expect(outcome(falProvider('user_operator'), delivery)).toBe('401 invalid_signature');
    expect(outcome(falProvider(null), delivery)).toBe('401 invalid_signature');
  });
});
