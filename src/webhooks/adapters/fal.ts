import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { CanonicalEvent, ProviderEventType } from '../canonical-event.js';
import { invalidPayload, invalidSignature } from '../errors.js';
import { isRecord, joinUrl, type UsageReading } from '../usage-source.js';
import type { WebhookAdapter } from './adapter.js';
import { parseJson } from './generic.js';
import { InvalidDurationError, secondsToMilliseconds } from './milliseconds.js';

export const FAL_DEFAULT_BASE_URL = 'https://queue.fal.run';
/** fal's tolerance for the signed timestamp, both ways. */
export const FAL_TIMESTAMP_TOLERANCE_SECONDS = 300;

export const STATUS_EVENTS: Record<string, ProviderEventType> = { OK: 'job.completed', ERROR: 'job.failed' };

/**
 * fal (CONTRACT.md "Named provider adapters"): Ed25519 over
 * `request_id \n user_id \n timestamp \n hex(sha256(raw body))`, keys from the provider's
 * JWKS. The body has no event id and no usage: the event key is derived from the request
 * id, status and body hash (so a redelivery of the same callback is the same event), and
 * the worker fetches `metrics.inference_time` from the request's status.
 */
export const falAdapter: WebhookAdapter = {
  receive(provider, raw, headers): CanonicalEvent {
    const bodyHash = verifyFalSignature(provider.jwks, raw, headers);
    // After the signature, which covers the user id header: fal signs every account's
    // webhooks with the same keys, so only the user id says the webhook is for this
    // operator. Same refusal as a bad signature (not from *your* fal), and the message
    // does not echo the configured id to an unauthenticated caller.
    if (provider.user_id && single(headers['x-fal-webhook-user-id']) !== provider.user_id) {
      throw invalidSignature("the webhook is signed for another fal user (X-Fal-Webhook-User-Id is not the provider's user_id)");
    }
    const body = parseJson(raw);
    if (!isRecord(body)) throw invalidPayload('the body must be a fal webhook object');
    const requestId = body['request_id'];
    if (typeof requestId !== 'string' || requestId.length === 0 || requestId.length > 200) {
      throw invalidPayload('request_id must be a string of 1 to 200 characters');
    }
    const status = body['status'];
    const type = typeof status === 'string' ? STATUS_EVENTS[status] : undefined;
    if (type === undefined) throw invalidPayload(`status must be OK or ERROR, got ${JSON.stringify(status)}`);
    return { eventKey: falEventKey(requestId, status as string, bodyHash), type, providerJobRef: requestId, fetchUsage: true };
  },

  usage: {
    request(target) {
      const model = target.model.split('/').map(encodeURIComponent).join('/');
      return {
        url: joinUrl(target.baseUrl ?? FAL_DEFAULT_BASE_URL, `${model}/requests/${encodeURIComponent(target.ref)}/status`),
        headers: { authorization: `Key ${target.apiKey}`, accept: 'application/json' },
      };
    },

    read(body, target, completion): UsageReading {
      if (!isRecord(body)) return { kind: 'retry', why: 'the answer is not a JSON object' };
      const id = body['request_id'];
      if (typeof id === 'string' && id !== target.ref) return { kind: 'mismatch', field: 'id', expected: target.ref, got: id };
      const status = body['status'];
      if (typeof status === 'string' && status !== 'COMPLETED') return { kind: 'retry', why: `the request is still ${status}` };
      const metrics = body['metrics'];
      const seconds = isRecord(metrics) ? metrics['inference_time'] : undefined;
      if (seconds === undefined || seconds === null) {
        return completion ? { kind: 'retry', why: 'the status reports no metrics.inference_time yet' } : { kind: 'usage', usage: null };
      }
      try {
        return { kind: 'usage', usage: { inference_ms: secondsToMilliseconds(seconds, 'metrics.inference_time') } };
      } catch (error) {
        if (error instanceof InvalidDurationError) return { kind: 'retry', why: error.message };
        throw error;
      }
    },
  },
};

/** Deterministic, computed only after verification: the same callback always has the same key. */
export function falEventKey(requestId: string, status: string, bodyHashHex: string): string {
  return `fal:${requestId}:${status}:${bodyHashHex.slice(0, 32)}`;
}

/** Verifies the delivery and returns hex(sha256(raw body)). Any key of the JWKS may verify. */
export function verifyFalSignature(jwks: { keys: unknown[] } | null, raw: Buffer, headers: IncomingHttpHeaders, now = Date.now()): string {
  const requestId = single(headers['x-fal-webhook-request-id']);
  const userId = single(headers['x-fal-webhook-user-id']);
  const timestamp = single(headers['x-fal-webhook-timestamp']);
  const signature = single(headers['x-fal-webhook-signature']);
  if (!requestId || !userId || !timestamp || !signature) {
    throw invalidSignature('X-Fal-Webhook-Request-Id, -User-Id, -Timestamp and -Signature headers are required');
  }
  if (!/^\d{1,12}$/.test(timestamp)) throw invalidSignature('X-Fal-Webhook-Timestamp must be unix seconds');
  if (Math.abs(Math.floor(now / 1000) - Number(timestamp)) > FAL_TIMESTAMP_TOLERANCE_SECONDS) {
    throw invalidSignature(`the timestamp is more than ${FAL_TIMESTAMP_TOLERANCE_SECONDS} s away from now`);
  }
  if (!/^[0-9a-fA-F]{128}$/.test(signature)) throw invalidSignature('X-Fal-Webhook-Signature must be a hex Ed25519 signature');
  const bodyHash = createHash('sha256').update(raw).digest('hex');
  const message = Buffer.from(`${requestId}\n${userId}\n${timestamp}\n${bodyHash}`, 'utf8');
  const sig = Buffer.from(signature, 'hex');
  for (const key of publicKeys(jwks)) {
    if (verify(null, message, key, sig)) return bodyHash;
  }
  throw invalidSignature('no key of the provider\'s JWKS verifies the signature');
}

/** The Ed25519 keys of a JWKS; keys that do not import are skipped (settings validation refuses them). */
export function publicKeys(jwks: { keys: unknown[] } | null): KeyObject[] {
  const keys: KeyObject[] = [];
  for (const jwk of jwks?.keys ?? []) {
    const key = importEd25519(jwk);
    if (key) keys.push(key);
  }
  return keys;
}

export function importEd25519(jwk: unknown): KeyObject | null {
  if (!isRecord(jwk) || jwk['kty'] !== 'OKP' || jwk['crv'] !== 'Ed25519' || typeof jwk['x'] !== 'string') return null;
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk['x'] }, format: 'jwk' });
    return key.asymmetricKeyType === 'ed25519' ? key : null;
  } catch {
    return null;
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
