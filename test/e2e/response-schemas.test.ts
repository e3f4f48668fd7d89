import { randomBytes, randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { RESPONSE_CHECKED_HEADER } from '../../src/api/response-check.js';
import { freshDatabase } from '../support/database.js';
import { startServer, waitUntil } from '../support/server.js';
import { Client, deliver, signDelivery, type Answer } from '../support/client.js';
import { completion, createWorld, submitJob } from '../support/world.js';

/**
 * The API description is true by construction: every route declares what it answers,
 * and (vitest.config.ts sets TALLY_CHECK_RESPONSES=1 for every server a test starts) the
 * server checks each JSON answer against it. Here: the check itself catches a lie, every
 * documented route has its schemas, and one pass over the whole API counts the routes
 * and (route, status) answers that were checked.
 */

const db = await freshDatabase();

describe('the response check', () => {
  it('turns an answer its schema does not allow into a 500 response_schema_violation', async () => {
    const app = await buildApp({ pool: db.pool, logLevel: 'silent', serverSecret: randomBytes(32), checkResponses: true });
    app.get('/lie/extra-field', { schema: { response: { 200: Type.Object({ a: Type.String() }) } } }, async () => ({ a: 'x', b: 1 }));
    app.get('/lie/wrong-type', { schema: { response: { 200: Type.Object({ a: Type.String() }) } } }, async () => ({ a: 1 }));
    app.get('/lie/status', { schema: { response: { 200: Type.Object({ a: Type.String() }) } } }, async (_r, reply) => reply.code(202 as 200).send({ a: 'x' }));
    app.get('/truth', { schema: { response: { 200: Type.Object({ a: Type.String() }) } } }, async () => ({ a: 'x' }));
    for (const [url, why] of [
      ['/lie/extra-field', /must NOT have additional properties/],
      ['/lie/wrong-type', /body\/a must be string/],
      ['/lie/status', /answered 202, a status its schema does not declare/],
    ] as const) {
      const answer = await app.inject({ method: 'GET', url });
      expect(answer.statusCode, url).toBe(500);
      expect(answer.json().error.code).toBe('response_schema_violation');
      expect(answer.json().error.message).toMatch(why);
    }
    const truth = await app.inject({ method: 'GET', url: '/truth' });
    expect(truth.statusCode).toBe(200);
    expect(truth.headers[RESPONSE_CHECKED_HEADER]).toBe('200');
    await app.close();
  });
});

describe('the OpenAPI document', () => {
  it('gives every operation a success schema and its error answers; required headers are required', async () => {
    const app = await buildApp({ pool: db.pool, logLevel: 'silent', serverSecret: randomBytes(32) });
    await app.ready();
    const document = app.swagger() as any;
    let operations = 0;
    for (const [path, methods] of Object.entries<any>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(methods)) {
        operations++;
        // A success: a 2xx, or for GET / the redirect to the console.
        const success = Object.entries<any>(operation.responses).filter(([status]) => status.startsWith('2') || (path === '/' && status === '302'));
        expect(success.length, `${method} ${path}`).toBeGreaterThan(0);
        for (const [status, response] of success) if (status !== '302') expect(Object.keys(response.content ?? {}), `${method} ${path} ${status}`).not.toHaveLength(0);
        expect(operation.responses['500'], `${method} ${path} declares 500`).toBeDefined();
      }
    }
    expect(operations).toBeGreaterThanOrEqual(20);
    const idempotencyKey = (path: string) => document.paths[path].post.parameters.find((p: any) => p.in === 'header' && p.name === 'idempotency-key');
    expect(idempotencyKey('/v1/jobs').required).toBe(true);
    expect(idempotencyKey('/v1/wallets/{id}/credits').required).toBe(true);
    expect(idempotencyKey('/v1/tenants').required).toBeFalsy();
    const webhook = document.paths['/v1/webhooks/{provider}'].post;
    const bodies = webhook.requestBody.content['application/json'].schema.anyOf;
    expect(bodies.map((b: any) => b.title)).toEqual(['generic', 'replicate', 'openai', 'fal']);
    await app.close();
  });
});

describe('every answer of the API', () => {
  it('matches its schema: one pass over every route, counted', async () => {
    const server = await startServer(db.url, { workers: 1 });
    const admin = new Client(server.url);
    const checked = new Map<string, number>();
    let answers = 0;
    const note = (route: string, answer: Answer) => {
      answers++;
      expect(answer.body?.error?.code, `${route}: ${JSON.stringify(answer.body)}`).not.toBe('response_schema_violation');
      if (answer.headers.get('content-type')?.includes('json') && answer.status !== 404) {
        expect(answer.headers.get(RESPONSE_CHECKED_HEADER), `${route} ${answer.status} was checked`).toBe(String(answer.status));
      }
      if (answer.headers.get(RESPONSE_CHECKED_HEADER)) checked.set(`${route} ${answer.status}`, (checked.get(`${route} ${answer.status}`) ?? 0) + 1);
      return answer;
    };
    const call = async (route: string, client: Client, method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
      note(route, await client.request(method, path, body, headers));

    await call('GET /v1', admin, 'GET', '/v1');
    await call('GET /healthz', admin, 'GET', '/healthz');
    const world = await createWorld(admin);
    await call('POST /v1/tenants', admin, 'POST', '/v1/tenants', { name: 'schema-tenant', metadata: { a: 'b' } });
    await call('POST /v1/tenants', admin, 'POST', '/v1/tenants', {});
    await call('POST /v1/tenants', world.tenant, 'POST', '/v1/tenants', { name: 'x' });
    await call('POST /v1/tenants', admin.as('wrong'), 'POST', '/v1/tenants', { name: 'x' });
    await call('POST /v1/wallets', world.tenant, 'POST', '/v1/wallets', { currency: 'USD' });
    await call('POST /v1/wallets', world.tenant, 'POST', '/v1/wallets', { currency: 'EUR' });
    await call('GET /v1/wallets/{id}', world.tenant, 'GET', `/v1/wallets/${world.walletId}`);
    await call('GET /v1/wallets/{id}', world.tenant, 'GET', `/v1/wallets/${randomUUID()}`);
    const key = randomUUID();
    await call('POST /v1/wallets/{id}/credits', admin, 'POST', `/v1/wallets/${world.walletId}/credits`, { amount: '5.00', reference: 'pay_1' }, { 'idempotency-key': key });
    await call('POST /v1/wallets/{id}/credits', admin, 'POST', `/v1/wallets/${world.walletId}/credits`, { amount: '5.00', reference: 'pay_1' }, { 'idempotency-key': key });
    await call('POST /v1/wallets/{id}/credits', admin, 'POST', `/v1/wallets/${world.walletId}/credits`, { amount: '6.00' }, { 'idempotency-key': key });
    await call('POST /v1/wallets/{id}/credits', admin, 'POST', `/v1/wallets/${world.walletId}/credits`, { amount: '1e3' }, { 'idempotency-key': randomUUID() });
    await call('PUT /v1/prices/{model}', admin, 'PUT', `/v1/prices/${world.model}`, { currency: 'USD', unit_prices: { input_tokens: '1.00', output_tokens: '2.00' } });
    await call('PUT /v1/prices/{model}', admin, 'PUT', `/v1/prices/${world.model}`, { currency: 'USD', unit_prices: { input_tokens: '1.50', output_tokens: '2.00' } });
    await call('POST /v1/providers', admin, 'POST', '/v1/providers', { name: `p-${randomUUID().slice(0, 8)}`, kind: 'generic', secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] });
    await call('POST /v1/providers', admin, 'POST', '/v1/providers', { name: world.provider, kind: 'generic', secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] });
    await call('PATCH /v1/providers/{name}', admin, 'PATCH', `/v1/providers/${world.provider}`, { policies: { cancel_grace_seconds: 60 } });
    await call('PATCH /v1/providers/{name}', admin, 'PATCH', `/v1/providers/nope-${randomUUID().slice(0, 6)}`, { policies: {} });

    const job = await submitJob(world);
    await call('POST /v1/jobs', world.tenant, 'POST', '/v1/jobs', { wallet_id: world.walletId, model: world.model, provider: world.provider, limits: { input_tokens: 10 }, metadata: { o: '1' } }, { 'idempotency-key': randomUUID() });
    await call('POST /v1/jobs', world.tenant, 'POST', '/v1/jobs', { wallet_id: world.walletId, model: world.model, provider: world.provider, limits: { input_tokens: 1e12 } }, { 'idempotency-key': randomUUID() });
    await call('POST /v1/jobs', world.tenant, 'POST', '/v1/jobs', { wallet_id: world.walletId, model: 'no-such-model', provider: world.provider, limits: { input_tokens: 1 } }, { 'idempotency-key': randomUUID() });
    await call('PATCH /v1/jobs/{id}', world.tenant, 'PATCH', `/v1/jobs/${job.id}`, { provider_job_ref: `ref-${job.id}` });
    await call('PATCH /v1/jobs/{id}', world.tenant, 'PATCH', `/v1/jobs/${job.id}`, { provider_job_ref: 'another' });
    note('POST /v1/webhooks/{provider}', await deliver(server.url, world.provider, signDelivery(completion(world, job.id, { input_tokens: 100, output_tokens: 10 }))));
    note('POST /v1/webhooks/{provider}', await deliver(server.url, world.provider, signDelivery({ type: 'job.nope', data: {} })));
    note('POST /v1/webhooks/{provider}', await deliver(server.url, world.provider, { body: '{}', headers: { 'content-type': 'application/json' } }));
    let settled: Answer | undefined;
    await waitUntil(async () => {
      settled = await call('GET /v1/jobs/{id}', world.tenant, 'GET', `/v1/jobs/${job.id}`);
      return settled.body.state === 'captured';
    });
    expect(settled!.body.settlements[0].pricing.lines.length).toBeGreaterThan(0);
    await call('GET /v1/jobs/{id}', admin, 'GET', `/v1/jobs/${job.id}`);
    await call('POST /v1/jobs/{id}/cancel', world.tenant, 'POST', `/v1/jobs/${job.id}/cancel`, {});
    const other = await submitJob(world);
    await call('POST /v1/jobs/{id}/cancel', world.tenant, 'POST', `/v1/jobs/${other.id}/cancel`, {});
    await call('GET /v1/wallets/{id}/entries', world.tenant, 'GET', `/v1/wallets/${world.walletId}/entries?limit=2`);
    await call('GET /v1/wallets/{id}/entries', world.tenant, 'GET', `/v1/wallets/${world.walletId}/entries?limit=0`);

    const run = await call('POST /v1/reconciliation/runs', admin, 'POST', '/v1/reconciliation/runs', {});
    await call('GET /v1/reconciliation/runs/{id}', admin, 'GET', `/v1/reconciliation/runs/${run.body.id}`);
    await call('GET /v1/reconciliation/runs/{id}', admin, 'GET', `/v1/reconciliation/runs/${randomUUID()}`);
    await call('POST /v1/reconciliation/exceptions/{id}/resolve', admin, 'POST', `/v1/reconciliation/exceptions/${randomUUID()}/resolve`, { note: 'n' });
    await call('POST /v1/provider-usage', admin, 'POST', '/v1/provider-usage', { import_id: randomUUID(), records: [{ provider: world.provider, provider_job_ref: `ref-${job.id}`, usage: { input_tokens: 100, output_tokens: 10 } }] });
    await call('POST /v1/events/{provider}/{event_key}/retry', admin, 'POST', `/v1/events/${world.provider}/nope/retry`, {});
    await call('POST /v1/events/{provider}/{event_key}/discard', admin, 'POST', `/v1/events/${world.provider}/nope/discard`, { note: 'n' });

    const routes = new Set([...checked.keys()].map((k) => k.replace(/ \d+$/, '')));
    console.log(`response check: ${answers} answers, ${routes.size} routes, ${checked.size} (route, status) pairs checked: ${[...checked.keys()].sort().join('; ')}`);
    expect(routes.size).toBeGreaterThanOrEqual(20);
    await server.stop();
  });
});
