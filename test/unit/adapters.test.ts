import { createHash, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { InvalidProviderSettings, validateProviderSettings, type ProviderRow } from '../../src/catalog/providers.js';
import { adapterFor, type ProviderKind } from '../../src/webhooks/adapters/index.js';
import { falAdapter, falEventKey } from '../../src/webhooks/adapters/fal.js';
import { InvalidDurationError, secondsToMilliseconds } from '../../src/webhooks/adapters/milliseconds.js';
import { openaiAdapter, sameModel } from '../../src/webhooks/adapters/openai.js';
import { replicateAdapter } from '../../src/webhooks/adapters/replicate.js';
import { WebhookRefused } from '../../src/webhooks/errors.js';
import type { UsageTarget } from '../../src/webhooks/usage-source.js';

/** The providers' published samples and SDK test vectors (copied from shared/providers/). */
function fixture<T = any>(name: string): T {
  return JSON.parse(readFileSync(new URL(`../fixtures/providers/${name}`, import.meta.url), 'utf8')) as T;
}

interface SignedVector {
  secret: string;
  headers: Record<string, string>;
  raw_body: string;
}

function provider(kind: ProviderKind, settings: Partial<ProviderRow> = {}): ProviderRow {
  return { name: `p-${kind}`, kind, secrets: [], jwks: null, api_key: null, base_url: null, policies: {}, created_at: new Date(), updated_at: new Date(), ...settings };
}

/** The refusal a call throws (its code), or 'accepted' when it returns. */
function outcome(call: () => unknown): string {
  try {
    call();
    return 'accepted';
  } catch (error) {
    if (error instanceof WebhookRefused) return error.code;
    throw error;
  }
}

/** The same bytes with one character replaced (a different one, so the bytes really change). */
function changeOneChar(text: string, index: number): string {
  const replacement = text[index] === 'A' ? 'B' : 'A';
  return text.slice(0, index) + replacement + text.slice(index + 1);
}

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

function standardDelivery(body: unknown, secret = SECRET, id = `msg_${randomUUID()}`) {
  const raw = JSON.stringify(body);
  const now = new Date();
  return {
    raw: Buffer.from(raw),
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, now, raw),
    } as IncomingHttpHeaders,
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe.each([
  ['replicate', 'replicate-webhook-signed-vector.json'],
  ['openai', 'openai-webhook-signed-vector.json'],
] as const)('the %s signed test vector', (kind, file) => {
  const vector = fixture<SignedVector>(file);
  const row = provider(kind, { secrets: [vector.secret] });
  const adapter = adapterFor(kind)!;
  const receive = (raw: string, headers: Record<string, string>) => outcome(() => adapter.receive(row, Buffer.from(raw, 'utf8'), headers));
  /** Not a signature refusal: the signature verified (the Replicate vector's body is no prediction). */
  const verified = (result: string) => result !== 'invalid_signature';

  function pinClock(offsetSeconds = 0) {
    // Only here: the vector's timestamp is years old, and verification checks it against now.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime((Number(vector.headers['webhook-timestamp']) + offsetSeconds) * 1000);
  }

  it('verifies with the clock pinned to its timestamp', () => {
    pinClock();
    expect(verified(receive(vector.raw_body, vector.headers))).toBe(true);
  });

  it('fails when one byte of the body, the id or the timestamp changes', () => {
    pinClock();
    for (const index of [0, Math.floor(vector.raw_body.length / 2), vector.raw_body.length - 1]) {
      expect(receive(changeOneChar(vector.raw_body, index), vector.headers)).toBe('invalid_signature');
    }
    const id = vector.headers['webhook-id']!;
    expect(receive(vector.raw_body, { ...vector.headers, 'webhook-id': changeOneChar(id, id.length - 1) })).toBe('invalid_signature');
    const timestamp = Number(vector.headers['webhook-timestamp']);
    expect(receive(vector.raw_body, { ...vector.headers, 'webhook-timestamp': String(timestamp + 1) })).toBe('invalid_signature');
    expect(receive(vector.raw_body, { ...vector.headers, 'webhook-signature': changeOneChar(vector.headers['webhook-signature']!, 5) })).toBe('invalid_signature');
  });

  it('fails outside the 5 minute tolerance, and with the real clock', () => {
    pinClock(301);
    expect(receive(vector.raw_body, vector.headers)).toBe('invalid_signature');
    pinClock(-301);
    expect(receive(vector.raw_body, vector.headers)).toBe('invalid_signature');
    pinClock(299);
    expect(verified(receive(vector.raw_body, vector.headers))).toBe(true);
    vi.useRealTimers();
    expect(receive(vector.raw_body, vector.headers)).toBe('invalid_signature');
  });
});

describe('the OpenAI signed vector, normalised', () => {
  it('is a response.completed for resp_123 whose usage is fetched', () => {
    const vector = fixture<SignedVector>('openai-webhook-signed-vector.json');
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Number(vector.headers['webhook-timestamp']) * 1000);
    const event = openaiAdapter.receive(provider('openai', { secrets: [vector.secret] }), Buffer.from(vector.raw_body), vector.headers);
    expect(event).toEqual({
      eventKey: 'wh_685c059ae39c8190af8c71ed1022a24d',
      type: 'job.completed',
      providerJobRef: 'resp_123',
      fetchUsage: true,
      usageResource: 'responses',
    });
  });
});

describe('seconds → milliseconds, exact and half-up', () => {
  it.each<[number, number]>([
    [1.0005, 1001],
    [4.0005, 4001], // 4.0005 × 1000 in floating point is 4000.4999999999995
    [0.5005, 501], // 0.5005 × 1000 in floating point is 500.49999999999994
    [0.0004, 0],
    [0.0005, 1],
    [12, 12_000],
    [1e-7, 0], // prints as "1e-7"
    [5e-7, 0],
    [0.012683, 13], // Replicate's sample predict_time
    [0.9995, 1000],
    [2.0045, 2005],
    [123.456789, 123_457],
    [0, 0],
    [-0, 0],
    [1e-3, 1],
    [4.5e-4, 0],
    [9.5e-4, 1],
    [1e12, 1e15],
    [9007199254740.99, 9_007_199_254_740_990],
  ])('%s s → %s ms', (seconds, millis) => {
    expect(secondsToMilliseconds(seconds, 'x')).toBe(millis);
  });

  it.each<[unknown]>([[-1], [-0.0004], [Number.NaN], [Number.POSITIVE_INFINITY], [Number.NEGATIVE_INFINITY], ['1.5'], [null], [undefined], [{}], [1e21], [9007199254740.992]])(
    'refuses %s',
    (seconds) => {
      expect(() => secondsToMilliseconds(seconds, 'metrics.predict_time')).toThrow(InvalidDurationError);
    },
  );

  it('is exact for every whole or half millisecond (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e11 }), (k) => {
        // k/1000 s prints as the decimal k/1000 exactly; (2k+1)/2000 s is k.5 ms: a tie, up.
        expect(secondsToMilliseconds(k / 1000, 's')).toBe(k);
        expect(secondsToMilliseconds((2 * k + 1) / 2000, 's')).toBe(k + 1);
      }),
    );
  });

  it('never strays more than half a millisecond from the value (property)', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e9, noNaN: true }), (seconds) => {
        const millis = secondsToMilliseconds(seconds, 's');
        expect(Number.isSafeInteger(millis)).toBe(true);
        expect(Math.abs(millis - seconds * 1000)).toBeLessThanOrEqual(0.5 + seconds * 1000 * Number.EPSILON * 4);
      }),
    );
  });
});

describe('replicate', () => {
  const row = provider('replicate', { secrets: [SECRET] });
  const succeeded = fixture('replicate-prediction-succeeded.json');
  const starting = fixture('replicate-prediction-starting.json');
  const receive = (body: unknown) => {
    const delivery = standardDelivery(body);
    return replicateAdapter.receive(row, delivery.raw, delivery.headers);
  };

  function delivered(body: unknown) {
    const delivery = standardDelivery(body);
    return { delivery, event: replicateAdapter.receive(row, delivery.raw, delivery.headers) };
  }

  it('maps the published succeeded prediction: id is the job ref, webhook-id the event key, predict_ms exact', () => {
    const { delivery, event } = delivered(succeeded);
    expect(event).toEqual({
      eventKey: delivery.headers['webhook-id'],
      type: 'job.completed',
      providerJobRef: 'gm3qorzdhgbfurvjtvhg6dckhu',
      model: 'replicate/hello-world',
      usage: { predict_ms: 13 },
    });
  });

  it('maps the published starting prediction (no model, empty metrics) to job.started without usage', () => {
    expect(delivered(starting).event).toMatchObject({ type: 'job.started', providerJobRef: 'ufawqhfynnddngldkgtslldrkq' });
    expect(delivered(starting).event).not.toHaveProperty('usage');
    expect(delivered(starting).event).not.toHaveProperty('model');
  });

  it.each<[string, Record<string, unknown> | undefined, string, Record<string, number> | undefined]>([
    ['processing', { predict_time: 1 }, 'job.started', undefined],
    ['succeeded', { predict_time: 4.0005 }, 'job.completed', { predict_ms: 4001 }],
    ['failed', {}, 'job.failed', undefined],
    ['failed', undefined, 'job.failed', undefined],
    ['failed', { predict_time: 2.5 }, 'job.failed', { predict_ms: 2500 }],
    ['canceled', {}, 'job.canceled', undefined],
    ['canceled', { predict_time: 0.0004 }, 'job.canceled', { predict_ms: 0 }],
  ])('status %s with metrics %j → %s, usage %j', (status, metrics, type, usage) => {
    const body = { ...succeeded, status, metrics };
    const event = receive(body);
    expect(event.type).toBe(type);
    expect(event.usage).toEqual(usage);
  });

  it.each<[string, Record<string, unknown>]>([
    ['a succeeded prediction without predict_time', { metrics: {} }],
    ['a negative predict_time', { metrics: { predict_time: -0.5 } }],
    ['a string predict_time', { metrics: { predict_time: '0.5' } }],
    ['an unknown status', { status: 'queued' }],
    ['no id', { id: undefined }],
    ['a numeric id', { id: 42 }],
  ])('refuses %s as invalid_payload', (_, change) => {
    expect(outcome(() => receive({ ...succeeded, ...change }))).toBe('invalid_payload');
  });
});

describe('openai', () => {
  const row = provider('openai', { secrets: [SECRET], api_key: 'sk-test' });

  it.each<[string, string, string]>([
    ['response.completed', 'job.completed', 'responses'],
    ['response.incomplete', 'job.completed', 'responses'],
    ['response.failed', 'job.failed', 'responses'],
    ['response.cancelled', 'job.canceled', 'responses'],
    ['batch.completed', 'job.completed', 'batches'],
    ['batch.failed', 'job.failed', 'batches'],
    ['batch.expired', 'job.failed', 'batches'],
    ['batch.cancelled', 'job.canceled', 'batches'],
  ])('%s → %s, usage fetched from %s', (openaiType, type, resource) => {
    const body = { ...fixture('openai-webhook-batch.completed.json'), type: openaiType, data: { id: 'obj_1' } };
    const delivery = standardDelivery(body);
    expect(openaiAdapter.receive(row, delivery.raw, delivery.headers)).toEqual({
      eventKey: delivery.headers['webhook-id'],
      type,
      providerJobRef: 'obj_1',
      fetchUsage: true,
      usageResource: resource,
    });
  });

  it.each<[string, unknown]>([
    ['an unknown type', { type: 'fine_tuning.job.succeeded', data: { id: 'x' } }],
    ['no data.id', { type: 'batch.completed', data: {} }],
    ['no data', { type: 'batch.completed' }],
    ['an array', []],
  ])('refuses %s as invalid_payload', (_, body) => {
    const delivery = standardDelivery(body);
    expect(outcome(() => openaiAdapter.receive(row, delivery.raw, delivery.headers))).toBe('invalid_payload');
  });

  const source = openaiAdapter.usage!;
  const target = (over: Partial<UsageTarget> = {}): UsageTarget => ({ ref: 'resp_67cb71b351908190a308f3859487620d06981a8637e6bc44', model: 'gpt-4o', resource: 'responses', baseUrl: null, apiKey: 'sk-test', ...over });

  it('fetches GET {base_url}/v1/responses/{id} or /v1/batches/{id} with the bearer key', () => {
    expect(source.request(target())).toEqual({
      url: 'https://api.openai.com/v1/responses/resp_67cb71b351908190a308f3859487620d06981a8637e6bc44',
      headers: { authorization: 'Bearer sk-test', accept: 'application/json' },
    });
    expect(source.request(target({ ref: 'batch_1', resource: 'batches', baseUrl: 'http://127.0.0.1:9/' })).url).toBe('http://127.0.0.1:9/v1/batches/batch_1');
  });

  it('reads the published response: uncached input, cached input and output tokens', () => {
    expect(source.read(fixture('openai-response-object-completed.json'), target(), true)).toEqual({
      kind: 'usage',
      usage: { input_tokens: 32, cached_input_tokens: 0, output_tokens: 18 },
    });
  });

  it('reads the published batch: input 1500 of which 1024 cached', () => {
    const batch = fixture('openai-batch-object.json');
    expect(source.read(batch, target({ ref: 'batch_abc123', model: 'gpt-5', resource: 'batches' }), true)).toEqual({
      kind: 'usage',
      usage: { input_tokens: 476, cached_input_tokens: 1024, output_tokens: 500 },
    });
  });

  it('reports an object of another id or model as a mismatch', () => {
    const response = fixture('openai-response-object-completed.json');
    expect(source.read(response, target({ ref: 'resp_other' }), true)).toMatchObject({ kind: 'mismatch', field: 'id', got: response.id });
    expect(source.read(response, target({ model: 'gpt-4o-mini' }), true)).toMatchObject({ kind: 'mismatch', field: 'model', got: 'gpt-4o-2024-08-06' });
    expect(source.read(response, target({ model: 'gpt-4' }), true)).toMatchObject({ kind: 'mismatch', field: 'model' });
    expect(source.read(response, target({ model: 'gpt-4o-2024-08-06' }), true)).toMatchObject({ kind: 'usage' });
  });

  it('accepts the dated snapshot of the job\'s model, nothing else', () => {
    expect(sameModel('gpt-4o', 'gpt-4o')).toBe(true);
    expect(sameModel('gpt-4o', 'gpt-4o-2024-08-06')).toBe(true);
    expect(sameModel('gpt-4o', 'gpt-4o-mini')).toBe(false);
    expect(sameModel('gpt-4o', 'gpt-4o-mini-2024-07-18')).toBe(false);
    expect(sameModel('gpt-4o-2024-08-06', 'gpt-4o')).toBe(false);
  });

  it('retries an unfinished object, a completion without usage, and malformed usage; a failure may have none', () => {
    const response = fixture('openai-response-object-completed.json');
    expect(source.read({ ...response, status: 'in_progress' }, target(), true).kind).toBe('retry');
    expect(source.read({ ...response, usage: null }, target(), true).kind).toBe('retry');
    expect(source.read({ ...response, status: 'failed', usage: null }, target(), false)).toEqual({ kind: 'usage', usage: null });
    expect(source.read({ ...response, usage: { ...response.usage, input_tokens: -1 } }, target(), true).kind).toBe('retry');
    expect(source.read({ ...response, usage: { ...response.usage, input_tokens_details: { cached_tokens: 33 } } }, target(), true).kind).toBe('retry');
    expect(source.read('not an object', target(), true).kind).toBe('retry');
  });
});

describe('fal', () => {
  const sample = readFileSync(new URL('../fixtures/providers/fal-webhook-completed.json', import.meta.url), 'utf8');
  const pair = () => generateKeyPairSync('ed25519');
  const { publicKey, privateKey } = pair();
  const jwk = (key: KeyObject) => key.export({ format: 'jwk' });
  const row = provider('fal', { jwks: { keys: [jwk(publicKey)] }, api_key: 'fal-key' });

  /** Signs like fal: Ed25519 over request_id \n user_id \n timestamp \n hex(sha256(body)). */
  function falDelivery(raw: string, options: { key?: KeyObject; requestId?: string; timestamp?: number; userId?: string } = {}) {
    const requestId = options.requestId ?? (JSON.parse(raw) as { request_id: string }).request_id;
    const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
    const userId = options.userId ?? 'user_1';
    const digest = createHash('sha256').update(raw).digest('hex');
    const signature = sign(null, Buffer.from(`${requestId}\n${userId}\n${timestamp}\n${digest}`), options.key ?? privateKey).toString('hex');
    return {
      raw: Buffer.from(raw),
      headers: {
        'x-fal-webhook-request-id': requestId,
        'x-fal-webhook-user-id': userId,
        'x-fal-webhook-timestamp': timestamp,
        'x-fal-webhook-signature': signature,
      } as Record<string, string>,
    };
  }
  const receive = (delivery: { raw: Buffer; headers: Record<string, string> }, at = row) => outcome(() => falAdapter.receive(at, delivery.raw, delivery.headers));

  it('verifies the published sample (hashing its raw bytes: its seed exceeds 2^53) and maps OK to a completion', () => {
    const delivery = falDelivery(sample);
    const event = falAdapter.receive(row, delivery.raw, delivery.headers);
    const digest = createHash('sha256').update(sample).digest('hex');
    expect(event).toEqual({
      eventKey: `fal:123e4567-e89b-12d3-a456-426614174000:OK:${digest.slice(0, 32)}`,
      type: 'job.completed',
      providerJobRef: '123e4567-e89b-12d3-a456-426614174000',
      fetchUsage: true,
    });
    // The parsed and re-serialised body is other bytes, and would verify as nothing.
    const reserialised = JSON.stringify(JSON.parse(sample));
    expect(reserialised).not.toBe(sample);
    expect(receive({ raw: Buffer.from(reserialised), headers: delivery.headers })).toBe('invalid_signature');
  });

  it('derives the same event key for two deliveries of the same callback, another for another body', () => {
    const once = falDelivery(sample, { timestamp: Math.floor(Date.now() / 1000) - 100 });
    const again = falDelivery(sample, { timestamp: Math.floor(Date.now() / 1000) + 30 });
    expect(again.headers['x-fal-webhook-signature']).not.toBe(once.headers['x-fal-webhook-signature']);
    const first = falAdapter.receive(row, once.raw, once.headers);
    const second = falAdapter.receive(row, again.raw, again.headers);
    expect(second.eventKey).toBe(first.eventKey);
    const other = falDelivery(sample.replace('"seed": 196619188014358660', '"seed": 196619188014358661'));
    const third = falAdapter.receive(row, other.raw, other.headers);
    expect(third.eventKey).not.toBe(first.eventKey);
    expect(falEventKey('r', 'OK', 'ab'.repeat(32))).toBe(`fal:r:OK:${'ab'.repeat(16)}`);
  });

  it('maps ERROR to a failure', () => {
    const delivery = falDelivery(JSON.stringify({ request_id: 'req_err', status: 'ERROR', error: 'boom', payload: null }));
    expect(falAdapter.receive(row, delivery.raw, delivery.headers)).toMatchObject({ type: 'job.failed', providerJobRef: 'req_err', fetchUsage: true });
  });

  it('refuses a forged signature, a key not in the JWKS, a changed byte and a stale timestamp as invalid_signature', () => {
    const good = falDelivery(sample);
    expect(receive(good)).toBe('accepted');
    const signature = good.headers['x-fal-webhook-signature']!;
    const flipped = signature.slice(0, 10) + (signature[10] === '0' ? '1' : '0') + signature.slice(11);
    const forged = { ...good, headers: { ...good.headers, 'x-fal-webhook-signature': flipped } };
    expect(receive(forged)).toBe('invalid_signature');
    const random = { ...good, headers: { ...good.headers, 'x-fal-webhook-signature': 'ab'.repeat(64) } };
    expect(receive(random)).toBe('invalid_signature');
    const stranger = pair().privateKey;
    expect(receive(falDelivery(sample, { key: stranger }))).toBe('invalid_signature');
    expect(receive({ raw: Buffer.from(sample.replace('image.png', 'image.jpg')), headers: good.headers })).toBe('invalid_signature');
    expect(receive({ raw: good.raw, headers: { ...good.headers, 'x-fal-webhook-user-id': 'user_2' } })).toBe('invalid_signature');
    expect(receive({ raw: good.raw, headers: { ...good.headers, 'x-fal-webhook-request-id': 'other' } })).toBe('invalid_signature');
    expect(receive(falDelivery(sample, { timestamp: Math.floor(Date.now() / 1000) - 301 }))).toBe('invalid_signature');
    expect(receive(falDelivery(sample, { timestamp: Math.floor(Date.now() / 1000) + 301 }))).toBe('invalid_signature');
    const { 'x-fal-webhook-signature': _, ...unsigned } = good.headers;
    expect(receive({ raw: good.raw, headers: unsigned })).toBe('invalid_signature');
    expect(receive(good, provider('fal', { jwks: { keys: [jwk(pair().publicKey)] } }))).toBe('invalid_signature');
  });

  it('accepts a signature from any key of the JWKS (rotation)', () => {
    const next = pair();
    const rotated = provider('fal', { jwks: { keys: [jwk(publicKey), jwk(next.publicKey)] } });
    expect(receive(falDelivery(sample, { key: next.privateKey }), rotated)).toBe('accepted');
    expect(receive(falDelivery(sample), rotated)).toBe('accepted');
  });

  it('refuses a signed body without request_id or with an unknown status as invalid_payload', () => {
    const noId = JSON.stringify({ status: 'OK' });
    expect(receive(falDelivery(noId, { requestId: 'r1' }))).toBe('invalid_payload');
    const pending = JSON.stringify({ request_id: 'r1', status: 'IN_PROGRESS' });
    expect(receive(falDelivery(pending))).toBe('invalid_payload');
  });

  const source = falAdapter.usage!;
  const target = (over: Partial<UsageTarget> = {}): UsageTarget => ({ ref: 'req_1', model: 'fal-ai/flux/dev', resource: undefined, baseUrl: null, apiKey: 'fal-key', ...over });

  it('fetches GET {base_url}/{model}/requests/{id}/status with "Key" auth and reads inference_ms exactly', () => {
    expect(source.request(target())).toEqual({
      url: 'https://queue.fal.run/fal-ai/flux/dev/requests/req_1/status',
      headers: { authorization: 'Key fal-key', accept: 'application/json' },
    });
    const status = { status: 'COMPLETED', request_id: 'req_1', metrics: { inference_time: 0.5005 } };
    expect(source.read(status, target(), true)).toEqual({ kind: 'usage', usage: { inference_ms: 501 } });
    expect(source.read({ ...status, metrics: { inference_time: 1e-7 } }, target(), true)).toEqual({ kind: 'usage', usage: { inference_ms: 0 } });
  });

  it('reports another request id as a mismatch; retries unfinished, missing or invalid metrics', () => {
    const status = { status: 'COMPLETED', request_id: 'req_1', metrics: { inference_time: 2 } };
    expect(source.read({ ...status, request_id: 'req_2' }, target(), true)).toMatchObject({ kind: 'mismatch', field: 'id' });
    expect(source.read({ ...status, status: 'IN_PROGRESS' }, target(), true).kind).toBe('retry');
    expect(source.read({ ...status, metrics: {} }, target(), true).kind).toBe('retry');
    expect(source.read({ ...status, metrics: {} }, target(), false)).toEqual({ kind: 'usage', usage: null });
    expect(source.read({ ...status, metrics: { inference_time: -1 } }, target(), true).kind).toBe('retry');
    expect(source.read({ ...status, metrics: { inference_time: 'x' } }, target(), true).kind).toBe('retry');
  });
});

describe('provider settings per kind', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const falJwks = { keys: [publicKey.export({ format: 'jwk' }) as unknown] };
  const refusal = (kind: ProviderKind, settings: Parameters<typeof validateProviderSettings>[1]) => {
    try {
      validateProviderSettings(kind, settings);
      return null;
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidProviderSettings);
      return (error as Error).message;
    }
  };

  it('accepts what each kind needs', () => {
    expect(refusal('replicate', { secrets: [SECRET] })).toBeNull();
    expect(refusal('openai', { secrets: [SECRET], api_key: 'sk', base_url: 'https://api.openai.com' })).toBeNull();
    expect(refusal('fal', { jwks: falJwks, api_key: 'k', base_url: 'http://127.0.0.1:8080/' })).toBeNull();
  });

  it('refuses missing or unused settings', () => {
    expect(refusal('replicate', {})).toMatch(/needs secrets/);
    expect(refusal('openai', { secrets: [SECRET] })).toMatch(/needs api_key/);
    expect(refusal('fal', { jwks: falJwks })).toMatch(/needs api_key/);
    expect(refusal('fal', { api_key: 'k' })).toMatch(/needs jwks/);
    expect(refusal('fal', { jwks: falJwks, api_key: 'k', secrets: [SECRET] })).toMatch(/does not use secrets/);
    expect(refusal('replicate', { secrets: [SECRET], api_key: 'k' })).toMatch(/does not use api_key/);
  });

  it('refuses a base_url that is not plain http(s)', () => {
    for (const base_url of ['ftp://example.com', 'not a url', 'https://user:pass@example.com', 'https://example.com/?key=1']) {
      expect(refusal('openai', { secrets: [SECRET], api_key: 'sk', base_url }), base_url).not.toBeNull();
    }
  });

  it('refuses JWKS keys that are not importable Ed25519 public keys, and private keys', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' });
    const x25519 = generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' });
    for (const keys of [[], [rsa], [x25519], [{ kty: 'OKP', crv: 'Ed25519' }], [{ kty: 'OKP', crv: 'Ed25519', x: '!!' }], [...falJwks.keys, rsa], [privateKey.export({ format: 'jwk' })]]) {
      expect(refusal('fal', { jwks: { keys }, api_key: 'k' }), JSON.stringify(keys)).not.toBeNull();
    }
  });
});
