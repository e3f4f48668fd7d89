import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { ADMIN_TOKEN, startServer } from '../support/server.js';
import { Client } from '../support/client.js';
import { createWorld, submitJob } from '../support/world.js';

/**
 * A call that takes no input, or only optional fields, is the same request however
 * "nothing" is sent (issue 37 item 8d): `POST /v1/webhook-endpoints/{id}/ping` without a
 * body was 400 where a bodyless cancel worked, and an empty body with a JSON content type
 * was 400 invalid_json on both. Over real HTTP, since the difference is in how bytes and
 * headers arrive.
 */

const db = await freshDatabase();
// No workers: a ping or a replay is queued, never sent, and reconciliation finds nothing to do.
const server = await startServer(db.url, { workers: 0, env: { TALLY_OUTBOUND_ALLOW: '127.0.0.1' } });
const admin = new Client(server.url);

/** The ways clients send nothing. fetch gives a string body a text/plain type, so `{}` without one goes as bytes. */
const NOTHING: [string, { body?: string | Uint8Array; headers: Record<string, string> }][] = [
  ['no body', { headers: {} }],
  ['an empty body with content-type: application/json', { body: '', headers: { 'content-type': 'application/json' } }],
  ['{} with content-type: application/json', { body: '{}', headers: { 'content-type': 'application/json' } }],
  ['{} without a content type', { body: new TextEncoder().encode('{}'), headers: {} }],
];

async function call(method: string, path: string, token: string, how: { body?: string | Uint8Array; headers: Record<string, string> }, extra: Record<string, string> = {}) {
  const response = await fetch(`${server.url}${path}`, { method, body: how.body, headers: { authorization: `Bearer ${token}`, ...how.headers, ...extra } });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, replayed: response.headers.get('idempotent-replayed') };
}

async function endpointOf(world: Awaited<ReturnType<typeof createWorld>>): Promise<string> {
  const endpoint = await world.tenant.post('/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks', events: ['*'] });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  return endpoint.body.id;
}

describe('calls that take no input accept every way of sending nothing', () => {
  it('ping, cancel, retry, a reconciliation run, a rotation, a replay and the DELETEs answer alike', async () => {
    const world = await createWorld(admin);
    const endpoint = await endpointOf(world);
    const job = (await submitJob(world)).id;
    const ping = await call('POST', `/v1/webhook-endpoints/${endpoint}/ping`, world.apiKey, NOTHING[2]![1]);
    expect(ping.status).toBe(202);
    const key = await world.tenant.post('/v1/api-keys', { name: 'to revoke' });
    expect(key.status).toBe(201);
    const unknown = randomUUID();
    // [route, method, path, credential, the status every way of sending nothing gets]
    const routes: [string, string, string, string, number][] = [
      ['ping', 'POST', `/v1/webhook-endpoints/${endpoint}/ping`, world.apiKey, 202],
      ['cancel (idempotent: 202 each time)', 'POST', `/v1/jobs/${job}/cancel`, world.apiKey, 202],
      ['retry of an unknown event', 'POST', `/v1/events/${world.provider}/evt_unknown/retry`, ADMIN_TOKEN, 404],
      ['a reconciliation run', 'POST', '/v1/reconciliation/runs', ADMIN_TOKEN, 201],
      ['a secret rotation', 'POST', `/v1/webhook-endpoints/${endpoint}/rotate-secret`, world.apiKey, 200],
      ['a message replay', 'POST', `/v1/webhook-messages/${ping.body.message_id}/replay`, world.apiKey, 202],
      ['revoking a key (again: the same answer)', 'DELETE', `/v1/api-keys/${key.body.id}`, world.apiKey, 200],
      ['deleting an unknown threshold', 'DELETE', `/v1/wallets/${world.walletId}/thresholds/${unknown}`, world.apiKey, 404],
      ['deleting an unknown spend limit', 'DELETE', `/v1/tenants/${world.tenantId}/spend-limits/${unknown}`, ADMIN_TOKEN, 404],
    ];
    for (const [route, method, path, token, status] of routes) {
      for (const [way, how] of NOTHING) {
        const answer = await call(method, path, token, how);
        expect.soft(answer.status, `${route}, ${way}: ${JSON.stringify(answer.body)}`).toBe(status);
      }
    }
  });

  it('is one request for an Idempotency-Key: nothing, then {}, replays the first answer', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const endpoint = await endpointOf(world);
    const key = { 'idempotency-key': randomUUID() };
    const first = await call('POST', `/v1/webhook-endpoints/${endpoint}/ping`, world.apiKey, NOTHING[0]![1], key);
    expect(first.status).toBe(202);
    for (const [, how] of NOTHING.slice(1)) {
      const again = await call('POST', `/v1/webhook-endpoints/${endpoint}/ping`, world.apiKey, how, key);
      expect(again).toEqual({ status: 202, body: first.body, replayed: 'true' });
    }
  });

  it('still refuses a body that says something it does not take, and an empty body where one is required', async () => {
    const world = await createWorld(admin, { credit: '0' });
    const endpoint = await endpointOf(world);
    const unknownField = await call('POST', `/v1/webhook-endpoints/${endpoint}/ping`, world.apiKey, { body: '{"note":"hi"}', headers: { 'content-type': 'application/json' } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error).toMatchObject({ code: 'invalid_request', param: 'note' });
    // A grant's void needs its note: nothing is a mistake there, refused as before (415 for a body of no type).
    const grant = await admin.post(`/v1/wallets/${world.walletId}/grants`, { amount: '1.00', category: 'promotional' }, { 'idempotency-key': randomUUID() });
    expect(grant.status).toBe(201);
    for (const [way, how] of NOTHING) {
      const answer = await call('POST', `/v1/grants/${grant.body.id}/void`, ADMIN_TOKEN, how);
      expect.soft([400, 415], way).toContain(answer.status);
      expect.soft(answer.body.error.code, way).toMatch(/^invalid_(request|json)$|^unsupported_media_type$/);
    }
  });
});
