import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { signWebhook, type FuzzWorld } from './world.js';
import type { FuzzRequest } from './transport.js';
import { bodyFor, evilAmount, evilNumber, evilString, serialise, type BodyDraft } from './values.js';

/**
 * Generated requests for every POST/PUT/PATCH route and for intake. A case is a recipe:
 * `build()` makes the request at send time (webhook timestamps are relative to now).
 */
export interface FuzzCase {
  route: string;
  how: string;
  build(): FuzzRequest;
}

type Who = 'admin' | 'tenant' | 'other';

// ---------------------------------------------------------------- headers

const AUTH_NOISE = fc.constantFrom(
  undefined,
  '',
  'Bearer',
  'Bearer ',
  'Basic dGVzdDp0ZXN0',
  'Bearer tk_',
  'Bearer tk_' + 'A'.repeat(43),
  'Bearer ' + 'x'.repeat(10_000),
  'bearer  test-admin-token',
  'Bearer test-admin-token extra',
  'Bearer\ttest-admin-token',
  'Bearer test-admin-tokeN',
);

function authHeader(world: FuzzWorld, who: Who): fc.Arbitrary<string | undefined> {
  const token = who === 'admin' ? world.adminToken : who === 'tenant' ? world.apiKey : world.otherApiKey;
  const wrongKind = who === 'admin' ? world.apiKey : world.adminToken;
  return fc.oneof(
    { arbitrary: fc.constant(`Bearer ${token}`), weight: 17 },
    { arbitrary: fc.constant(`Bearer ${wrongKind}`), weight: 1 },
    { arbitrary: AUTH_NOISE, weight: 2 },
  );
}

const CONTENT_TYPES = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 14 },
  {
    arbitrary: fc.constantFrom(
      undefined,
      '',
      'application/json; charset=utf-8',
      'application/json; charset=utf-16',
      'application/json; charset=latin1',
      'APPLICATION/JSON',
      'application/json, text/plain',
      'application/json;;;',
      'application/jsonx',
      'application/vnd.api+json',
      'text/plain',
      'text/html',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=xyz',
      'application/octet-stream',
      '*/*',
      'application/json; ' + 'p=1;'.repeat(2000),
      '\u00e9/\u00e9',
    ),
    weight: 3,
  },
);

const EVIL_IDEMPOTENCY_KEYS = fc.constantFrom(
  '',
  ' ',
  'a b',
  '\t',
  'x'.repeat(255),
  'x'.repeat(256),
  'x'.repeat(10_000),
  'ключ',
  '💸',
  'é',
  '%00',
  '../..',
  '__proto__',
  'null',
  ['k1', 'k2'],
  ['', 'k'],
);

function idempotencyKey(required: boolean): fc.Arbitrary<string | string[] | undefined> {
  return fc.oneof(
    { arbitrary: fc.constant(undefined), weight: required ? 1 : 8 },
    { arbitrary: fc.uuid().map((u) => `fz-${u}`), weight: required ? 14 : 6 },
    { arbitrary: EVIL_IDEMPOTENCY_KEYS, weight: 3 },
  );
}

const EXTRA_HEADERS = fc.oneof(
  { arbitrary: fc.constant({} as Record<string, string>), weight: 10 },
  {
    arbitrary: fc.constantFrom<Record<string, string>>(
      { 'content-encoding': 'gzip' },
      { 'content-encoding': 'br' },
      { 'content-encoding': 'identity' },
      { accept: 'text/html' },
      { accept: 'application/xml' },
      { 'accept-encoding': 'gzip' },
      { 'x-http-method-override': 'DELETE' },
      { 'x-forwarded-for': '1.2.3.4, ' + '9.9.9.9, '.repeat(500) },
      { 'x-forwarded-proto': 'javascript' },
      { 'idempotent-replayed': 'true' },
      { expect: '100-continue' },
      { 'x-request-id': 'x'.repeat(8000) },
      { cookie: 'a=' + 'b'.repeat(4000) },
    ),
    weight: 2,
  },
);

// ---------------------------------------------------------------- paths

/** Percent-encodes the UTF-8 bytes of any string (a lone surrogate becomes U+FFFD, as on the wire). */
function encodeBytes(s: string): string {
  return [...Buffer.from(s, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : '%' + b.toString(16).toUpperCase().padStart(2, '0'),
    )
    .join('');
}

/** Spellings of one id in a path: as stored, upper case, percent-encoded, damaged, another. */
function pathId(canonical: string, others: string[] = []): fc.Arbitrary<string> {
  const encodeAll = (s: string) => [...s].map((c) => '%' + c.charCodeAt(0).toString(16).padStart(2, '0')).join('');
  return fc.oneof(
    { arbitrary: fc.constant(encodeURIComponent(canonical)), weight: 14 },
    {
      arbitrary: fc.constantFrom(
        encodeURIComponent(canonical.toUpperCase()),
        encodeAll(canonical),
        encodeAll(canonical).toLowerCase(),
        encodeURIComponent(canonical).replace(/%/g, '%25'),
        encodeURIComponent(canonical) + '%00',
        encodeURIComponent(canonical) + '/',
        encodeURIComponent(canonical) + '%2F',
        encodeURIComponent(canonical) + '?x=1&x=2&__proto__=y',
        encodeURIComponent(canonical) + '#frag',
        encodeURIComponent(canonical) + '%',
        encodeURIComponent(canonical) + '%zz',
        '%E0%A4%A',
        '%C0%AF',
        '%ED%A0%80',
        '%FF',
        '..',
        '.',
        '%2e%2e',
        'x'.repeat(4096),
        'x'.repeat(4097),
        'x'.repeat(20_000),
        '00000000-0000-0000-0000-000000000000',
        'ffffffff-ffff-ffff-ffff-ffffffffffff',
        '%20' + encodeURIComponent(canonical),
        'null',
        'undefined',
        '__proto__',
        'constructor',
        ...others.map(encodeURIComponent),
      ),
      weight: 6,
    },
    { arbitrary: fc.uuid(), weight: 1 },
    { arbitrary: evilString.map((s) => encodeBytes(s.slice(0, 3000))), weight: 1 },
  );
}

// ---------------------------------------------------------------- the generic case

interface RouteSpec {
  route: string;
  method: string;
  who: Who;
  path: fc.Arbitrary<string>;
  body: fc.Arbitrary<BodyDraft>;
  idempotency?: 'required' | 'optional';
}

function caseOf(spec: RouteSpec): fc.Arbitrary<FuzzCase> {
  return fc
    .record({
      path: spec.path,
      body: spec.body,
      auth: authHeader(WORLD!, spec.who),
      contentType: CONTENT_TYPES,
      key: spec.idempotency ? idempotencyKey(spec.idempotency === 'required') : fc.constant(undefined),
      extra: EXTRA_HEADERS,
    })
    .map(({ path, body, auth, contentType, key, extra }) => ({
      route: spec.route,
      how: body.how,
      build: () => ({
        method: spec.method,
        url: path,
        headers: clean({
          authorization: auth,
          'content-type': body.text === undefined ? undefined : contentType,
          'idempotency-key': key,
          ...extra,
        }),
        ...(body.text !== undefined ? { body: body.text } : {}),
      }),
    }));
}

function clean(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  return Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)) as Record<string, string | string[]>;
}

// The arbitraries close over the seeded world; set once by casesFor().
let WORLD: FuzzWorld | null = null;

const name = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,20}$/).map((s) => `fz-${s}`);
const secret = fc.constantFrom(
  'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  'whsec_' + 'A'.repeat(40),
  'whsec_!!!',
  'whsec_',
  'not-a-secret',
  'whsec_' + 'QQ=='.repeat(100),
);
const policies = fc.record(
  {
    failed_with_usage: fc.constantFrom('release', 'capture'),
    cancel_grace_seconds: fc.integer({ min: 1, max: 31_536_000 }),
    hold_ttl_seconds: fc.integer({ min: 1, max: 31_536_000 }),
  },
  { requiredKeys: [] },
);
const jwks = fc.constant({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid: 'k1' }] });
const dimension = fc.oneof(
  { arbitrary: fc.constantFrom('input_tokens', 'output_tokens'), weight: 8 },
  {
    arbitrary: fc.constantFrom('cached_input_tokens', 'predict_ms', 'INPUT_TOKENS', '', '\u0000', '\ud800', 'x'.repeat(101), '__proto__'),
    weight: 2,
  },
);
const usageValue = fc.oneof({ arbitrary: fc.integer({ min: 0, max: 100_000 }), weight: 6 }, { arbitrary: evilNumber, weight: 2 });
const usage = fc.dictionary(dimension, usageValue, { minKeys: 1, maxKeys: 3 });

function routeSpecs(w: FuzzWorld): RouteSpec[] {
  const wallet = pathId(w.walletId, [w.otherWalletId]);
  const job = (canonical: string) => pathId(canonical, [w.jobId, w.bareJobId, w.otherJobId]);
  return [
    {
      route: 'POST /v1/tenants',
      method: 'POST',
      who: 'admin',
      idempotency: 'optional',
      path: fc.constant('/v1/tenants'),
      body: bodyFor(fc.record({ name })),
    },
    {
      route: 'POST /v1/providers',
      method: 'POST',
      who: 'admin',
      idempotency: 'optional',
      path: fc.constant('/v1/providers'),
      body: bodyFor(
        fc.oneof(
          fc.record(
            { name, kind: fc.constant('generic'), secrets: fc.array(secret, { minLength: 1, maxLength: 2 }), policies },
            { requiredKeys: ['name', 'kind', 'secrets'] },
          ),
          fc.record({ name, kind: fc.constant('replicate'), secrets: fc.array(secret, { minLength: 1, maxLength: 2 }) }),
          fc.record({
            name,
            kind: fc.constant('openai'),
            secrets: fc.array(secret, { minLength: 1, maxLength: 1 }),
            api_key: fc.constant('sk-x'),
            base_url: fc.constantFrom('http://127.0.0.1:9', 'not a url', 'file:///etc/passwd'),
          }),
          fc.record({ name, kind: fc.constant('fal'), jwks, api_key: fc.constant('k'), base_url: fc.constant('http://127.0.0.1:9') }),
        ),
      ),
    },
    {
      route: 'PATCH /v1/providers/:name',
      method: 'PATCH',
      who: 'admin',
      path: pathId(w.patchProvider, ['unknown-provider']).map((p) => `/v1/providers/${p}`),
      body: bodyFor(
        fc.record(
          {
            secrets: fc.array(secret, { maxLength: 3 }),
            policies,
            jwks: fc.oneof(jwks, fc.constant(null)),
            api_key: fc.constantFrom('k', null),
            base_url: fc.constantFrom('http://127.0.0.1:9', null),
          },
          { requiredKeys: [] },
        ),
      ),
    },
    {
      route: 'PUT /v1/prices/:model',
      method: 'PUT',
      who: 'admin',
      idempotency: 'optional',
      path: fc.oneof(pathId(w.putModels[0]!, [w.putModels[1]!, w.cheapModel]), pathId(w.putModels[1]!)).map((p) => `/v1/prices/${p}`),
      body: bodyFor(
        fc.record({
          currency: fc.constantFrom('USD', 'EUR'),
          unit_prices: fc.dictionary(
            dimension,
            fc.oneof(
              { arbitrary: fc.constantFrom('1.00', '0.000001', '1000000000000', '0'), weight: 3 },
              { arbitrary: evilAmount, weight: 1 },
            ),
            {
              minKeys: 1,
              maxKeys: 3,
            },
          ),
        }),
      ),
    },
    {
      route: 'POST /v1/wallets',
      method: 'POST',
      who: 'tenant',
      idempotency: 'optional',
      path: fc.constant('/v1/wallets'),
      body: bodyFor(fc.record({ currency: fc.oneof(fc.constantFrom('USD', 'EUR', 'GBP'), fc.stringMatching(/^[A-Z]{3}$/)) })),
    },
    {
      route: 'POST /v1/wallets/:id/credits',
      method: 'POST',
      who: 'admin',
      idempotency: 'required',
      path: wallet.map((id) => `/v1/wallets/${id}/credits`),
      body: bodyFor(
        fc.record(
          {
            amount: fc.oneof(
              { arbitrary: fc.constantFrom('1.00', '0.000001', '1000000000000', '999999999999.999999'), weight: 2 },
              { arbitrary: evilAmount, weight: 3 },
            ),
            reference: fc.string({ maxLength: 20 }),
          },
          { requiredKeys: ['amount'] },
        ),
      ),
    },
    {
      route: 'POST /v1/jobs',
      method: 'POST',
      who: 'tenant',
      idempotency: 'required',
      path: fc.constant('/v1/jobs'),
      body: bodyFor(
        fc.record(
          {
            wallet_id: fc.constantFrom(w.walletId, w.walletId.toUpperCase(), w.otherWalletId),
            model: fc.constantFrom(w.cheapModel, w.dearModel, w.putModels[0]!, 'no-such-model'),
            provider: fc.constantFrom(w.provider, w.provider.toUpperCase(), 'no-such-provider'),
            provider_job_ref: fc.oneof(fc.uuid(), fc.constant(w.jobRef)),
            limits: fc.oneof(
              usage,
              fc.record({
                input_tokens: fc.constantFrom(1, 10 ** 7, 10 ** 13, Number.MAX_SAFE_INTEGER),
                output_tokens: fc.constantFrom(0, 1, 10 ** 9, Number.MAX_SAFE_INTEGER),
              }),
            ),
          },
          { requiredKeys: ['wallet_id', 'model', 'provider', 'limits'] },
        ),
      ),
    },
    {
      route: 'PATCH /v1/jobs/:id',
      method: 'PATCH',
      who: 'tenant',
      path: fc.oneof(job(w.bareJobId), job(w.jobId)).map((id) => `/v1/jobs/${id}`),
      body: bodyFor(fc.record({ provider_job_ref: fc.oneof(fc.uuid(), fc.constant(w.jobRef)) })),
    },
    {
      route: 'POST /v1/jobs/:id/cancel',
      method: 'POST',
      who: 'tenant',
      path: fc.oneof(job(w.otherJobId), job(w.bareJobId)).map((id) => `/v1/jobs/${id}/cancel`),
      body: fc.oneof(
        { arbitrary: fc.constant({ text: undefined, how: 'no-body' }), weight: 2 },
        { arbitrary: bodyFor(fc.constant({})), weight: 3 },
      ),
    },
    {
      route: 'POST /v1/events/:provider/:event_key/retry',
      method: 'POST',
      who: 'admin',
      path: fc
        .tuple(pathId(w.provider, [w.patchProvider]), pathId(w.deadEventKey, [w.acceptedEventKey]))
        .map(([p, k]) => `/v1/events/${p}/${k}/retry`),
      body: fc.oneof(fc.constant({ text: undefined, how: 'no-body' }), bodyFor(fc.constant({}))),
    },
    {
      route: 'POST /v1/events/:provider/:event_key/discard',
      method: 'POST',
      who: 'admin',
      path: fc
        .tuple(pathId(w.provider, [w.patchProvider]), pathId(w.deadEventKey, [w.acceptedEventKey]))
        .map(([p, k]) => `/v1/events/${p}/${k}/discard`),
      body: bodyFor(fc.record({ note: fc.string({ minLength: 1, maxLength: 30 }) })),
    },
    {
      route: 'POST /v1/reconciliation/exceptions/:id/resolve',
      method: 'POST',
      who: 'admin',
      path: pathId('00000000-0000-7000-8000-000000000000').map((id) => `/v1/reconciliation/exceptions/${id}/resolve`),
      body: bodyFor(fc.record({ note: fc.string({ minLength: 1, maxLength: 30 }) })),
    },
    {
      route: 'POST /v1/provider-usage',
      method: 'POST',
      who: 'admin',
      idempotency: 'optional',
      path: fc.constant('/v1/provider-usage'),
      body: bodyFor(
        fc.record({
          import_id: fc.uuid(),
          records: fc.array(
            fc.record({ provider: fc.constantFrom(w.provider, 'nope'), provider_job_ref: fc.constantFrom(w.jobRef, 'pj-unknown'), usage }),
            { maxLength: 3 },
          ),
        }),
      ),
    },
  ];
}

/** Reconciliation runs are costly when valid (a whole run each): their own, smaller share. */
function reconciliationSpec(): RouteSpec {
  return {
    route: 'POST /v1/reconciliation/runs',
    method: 'POST',
    who: 'admin',
    idempotency: 'optional',
    path: fc.constant('/v1/reconciliation/runs'),
    body: bodyFor(fc.record({ repair: fc.boolean() }, { requiredKeys: [] })),
  };
}

// ---------------------------------------------------------------- intake

const TYPES = ['job.started', 'job.progress', 'job.completed', 'job.failed', 'job.canceled', 'job.usage_corrected'] as const;

function webhookCase(w: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const data = fc.record(
    {
      job_id: fc.constantFrom(w.jobId, w.bareJobId, w.otherJobId, w.jobId.toUpperCase(), randomUUID()),
      provider_job_ref: fc.constantFrom(w.jobRef, 'pj-unknown'),
      tenant_id: fc.constantFrom(w.tenantId, w.otherTenantId),
      model: fc.constantFrom(w.cheapModel, 'other-model'),
      currency: fc.constantFrom('USD', 'EUR'),
      usage,
      correction: fc.oneof(fc.integer({ min: 1, max: 5 }), evilNumber),
      amount: evilAmount,
    },
    { requiredKeys: ['job_id'] },
  );
  const valid = fc.record({ type: fc.constantFrom(...TYPES), timestamp: fc.constant('2026-12-02T10:00:00Z'), data });
  const eventId = fc.oneof(
    { arbitrary: fc.uuid().map((u) => `msg_${u}`), weight: 14 },
    {
      arbitrary: fc.constantFrom(
        'x'.repeat(500),
        'x'.repeat(501),
        'x'.repeat(600),
        'x'.repeat(4000),
        'x'.repeat(20_000),
        'é'.repeat(300),
        ' ',
        'msg with spaces',
        '__proto__',
        w.acceptedEventKey,
        w.deadEventKey,
      ),
      weight: 5,
    },
    { arbitrary: evilString.filter((s) => s.length > 0 && s.length < 8000 && /^[\x20-\x7e]*$/.test(s)), weight: 1 },
  );
  const timestamp = fc.oneof(
    { arbitrary: fc.constant(0).map((o) => ({ offset: o })), weight: 14 },
    { arbitrary: fc.constantFrom(-301, 301, -3600, 86_400 * 365, -86_400 * 365 * 30).map((o) => ({ offset: o })), weight: 2 },
    {
      arbitrary: fc
        .constantFrom('0', '-1', 'abc', '1e9', '1.5', ' 1', '9'.repeat(12), '9'.repeat(13), '9'.repeat(400), '')
        .map((raw) => ({ raw })),
      weight: 2,
    },
  );
  const signing = fc.oneof(
    { arbitrary: fc.constant('valid' as const), weight: 12 },
    {
      arbitrary: fc.constantFrom(
        'wrong-secret',
        'none',
        'list',
        'tampered',
        'v2',
        'garbage',
        'huge-list',
        'valid-after-body-change',
      ) as fc.Arbitrary<string>,
      weight: 5,
    },
  );
  return fc
    .record({
      provider: pathId(w.provider, [w.patchProvider, 'no-such-provider']),
      // More intact bodies than elsewhere: header damage needs a body that gets through.
      body: fc.oneof(
        { arbitrary: bodyFor(valid), weight: 3 },
        { arbitrary: valid.map((v) => ({ text: serialise(v), how: 'valid' })), weight: 2 },
      ),
      id: eventId,
      timestamp,
      signing,
      contentType: CONTENT_TYPES,
      extra: EXTRA_HEADERS,
    })
    .map(({ provider, body, id, timestamp, signing, contentType, extra }) => ({
      route: 'POST /v1/webhooks/:provider',
      how: `${body.how}/${signing}`,
      build: () => {
        const raw = body.text ?? '';
        const now = new Date();
        const stamp = timestamp as { offset?: number; raw?: string };
        const at = stamp.raw !== undefined ? null : new Date(now.getTime() + stamp.offset! * 1000);
        const ts = at ? String(Math.floor(at.getTime() / 1000)) : stamp.raw!;
        const sign = (secret: string, payload: string) =>
          at ? signWebhook(secret, id, at, payload) : `v1,${Buffer.from('x').toString('base64')}`;
        let signature: string | undefined;
        switch (signing) {
          case 'valid':
            signature = sign(w.secret, raw);
            break;
          case 'wrong-secret':
            signature = sign('whsec_' + Buffer.from('another secret key!').toString('base64'), raw);
            break;
          case 'none':
            signature = undefined;
            break;
          case 'list':
            signature = `v1,Zm9v v1a,bar ${sign(w.secret, raw)} v1,`;
            break;
          case 'tampered':
            signature = sign(w.secret, raw + ' ');
            break;
          case 'v2':
            signature = sign(w.secret, raw).replace('v1,', 'v2,');
            break;
          case 'garbage':
            signature = 'v1,' + '!'.repeat(100);
            break;
          case 'huge-list':
            signature = Array.from({ length: 2000 }, () => 'v1,AAAA').join(' ') + ' ' + sign(w.secret, raw);
            break;
          case 'valid-after-body-change':
            signature = sign(w.secret, raw.replace('job.', 'job,'));
            break;
        }
        return {
          method: 'POST',
          url: `/v1/webhooks/${provider}`,
          headers: clean({
            'content-type': contentType,
            'webhook-id': id,
            'webhook-timestamp': ts,
            'webhook-signature': signature,
            ...extra,
          }),
          body: raw,
        };
      },
    }));
}

/** routes that share `perRoute` (all but intake and reconciliation runs) */
export const ROUTE_COUNT = 13;

export interface CaseMix {
  /** cases per non-webhook route */
  perRoute: number;
  webhooks: number;
  reconciliationRuns: number;
}

/** All cases, deterministic for a seed: per route, then intake, then reconciliation runs. */
export function casesFor(world: FuzzWorld, mix: CaseMix, seed: number): FuzzCase[] {
  WORLD = world;
  const cases: FuzzCase[] = [];
  routeSpecs(world).forEach((spec, i) => cases.push(...fc.sample(caseOf(spec), { seed: seed + i, numRuns: mix.perRoute })));
  cases.push(...fc.sample(webhookCase(world), { seed: seed + 100, numRuns: mix.webhooks }));
  cases.push(...fc.sample(caseOf(reconciliationSpec()), { seed: seed + 200, numRuns: mix.reconciliationRuns }));
  return cases;
}

export { serialise };
