import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/transaction.js';
import { checkRegistration, destinationPolicy, DestinationRefused } from '../../src/outbound/destinations.js';
import { deliver } from '../../src/outbound/deliver.js';
import { enqueueMessage } from '../../src/outbound/enqueue.js';
import { afterFailure } from '../../src/outbound/retry-schedule.js';
import { Client } from '../support/client.js';
import { freshDatabase } from '../support/database.js';
import { freePort, startServer, waitUntil } from '../support/server.js';
import { WebhookReceiver, type Received } from '../support/webhook-receiver.js';

/**
 * Outbound webhooks end to end: real `tally serve` processes delivering to real HTTP
 * receivers on 127.0.0.1 (allowed by TALLY_OUTBOUND_ALLOW), every signature checked with
 * the standardwebhooks package the way a receiver would.
 */

const db = await freshDatabase();
const FAST = {
  TALLY_OUTBOUND_ALLOW: '127.0.0.1',
  TALLY_OUTBOUND_BACKOFF_MS: '40',
  TALLY_OUTBOUND_TIMEOUT_MS: '1000',
  TALLY_OUTBOUND_LEASE_SECONDS: '3',
  TALLY_POLL_INTERVAL_MS: '50',
};
const server = await startServer(db.url, { workers: 1, env: FAST });
// Short windows: a delivery gives up after ~0.7 s, an endpoint failing for ~1.8 s is disabled.
// A database of its own: its workers must not apply these windows to the other tests' deliveries.
const shortDb = await freshDatabase();
const shortLived = await startServer(shortDb.url, {
  workers: 1,
  env: { ...FAST, TALLY_OUTBOUND_RETRY_HOURS: '0.0002', TALLY_OUTBOUND_DISABLE_AFTER_HOURS: '0.0005' },
});
// The default policy: public addresses only.
const strict = await startServer(db.url, { workers: 0, env: { TALLY_OUTBOUND_ALLOW: '' } });
const admin = new Client(server.url);

async function newTenant(name: string): Promise<{ id: string; client: Client }> {
  const created = await admin.post('/v1/tenants', { name });
  expect(created.status).toBe(201);
  return { id: created.body.id, client: admin.as(created.body.api_key) };
}

async function register(client: Client, url: string, events: string[] = ['*']): Promise<{ id: string; secret: string }> {
  const created = await client.post('/v1/webhook-endpoints', { url, events, description: 'test receiver' });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect(created.body.secret).toMatch(/^whsec_/);
  return created.body;
}

/** Throws unless `secret` verifies the request, as a receiver using standardwebhooks checks it. */
function verify(received: Received, secret: string): unknown {
  return new Webhook(secret).verify(received.body, received.headers);
}

function verifies(received: Received, secret: string): boolean {
  try {
    verify(received, secret);
    return true;
  } catch {
    return false;
  }
}

async function ping(client: Client, endpointId: string): Promise<string> {
  const sent = await client.post(`/v1/webhook-endpoints/${endpointId}/ping`);
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  return sent.body.message_id;
}

async function attempts(client: Client, endpointId: string): Promise<any[]> {
  const listed = await client.get(`/v1/webhook-endpoints/${endpointId}/attempts?limit=100`);
  expect(listed.status).toBe(200);
  return listed.body.data;
}

async function deliveryStates(messageId: string, pool = db.pool): Promise<string[]> {
  const result = await pool.query<{ state: string }>('select state from outbound_deliveries where message_id = $1 order by id', [
    messageId,
  ]);
  return result.rows.map((r) => r.state);
}

describe('registering endpoints', () => {
  it('shows the secret once, lists, reads, changes, and keeps tenants apart', async () => {
    const acme = await newTenant('acme');
    const other = await newTenant('other');
    const created = await acme.client.post('/v1/webhook-endpoints', {
      url: 'http://127.0.0.1:9/hooks',
      events: ['job.settled', 'wallet.credited'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      tenant_id: acme.id,
      url: 'http://127.0.0.1:9/hooks',
      events: ['job.settled', 'wallet.credited'],
      description: null,
      disabled: false,
    });
    const id = created.body.id;

    const read = await acme.client.get(`/v1/webhook-endpoints/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('secret');
    expect((await acme.client.get('/v1/webhook-endpoints')).body.data.map((e: any) => e.id)).toEqual([id]);
    expect((await other.client.get(`/v1/webhook-endpoints/${id}`)).status).toBe(404);
    expect((await other.client.get('/v1/webhook-endpoints')).body.data).toEqual([]);
    expect((await other.client.request('PATCH', `/v1/webhook-endpoints/${id}`, { disabled: true })).status).toBe(404);
    expect((await admin.get(`/v1/webhook-endpoints?tenant_id=${acme.id}`)).body.data).toHaveLength(1);

    const changed = await acme.client.request('PATCH', `/v1/webhook-endpoints/${id}`, {
      events: ['*'],
      description: 'all of it',
      disabled: true,
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      events: ['*'],
      description: 'all of it',
      disabled: true,
      disabled_reason: `disabled by tenant:${acme.id}`,
    });
    expect((await acme.client.request('PATCH', `/v1/webhook-endpoints/${id}`, { disabled: false })).body).toMatchObject({
      disabled: false,
      disabled_reason: null,
    });

    // The admin names the tenant; without one it is a 400.
    expect((await admin.post('/v1/webhook-endpoints', { url: 'https://example.com/', events: ['*'] })).body.error.param).toBe('tenant_id');
    expect((await admin.post('/v1/webhook-endpoints', { url: 'https://example.com/', events: ['*'], tenant_id: acme.id })).status).toBe(
      201,
    );
    expect(
      (await acme.client.post('/v1/webhook-endpoints', { url: 'https://example.com/', events: ['*'], tenant_id: other.id })).status,
    ).toBe(403);
    expect((await acme.client.post('/v1/webhook-endpoints', { url: 'https://example.com/', events: ['job.finished'] })).status).toBe(400);
    // An idempotent retry answers the same endpoint and secret, once.
    const key = { 'idempotency-key': 'endpoint-1' };
    const first = await acme.client.post('/v1/webhook-endpoints', { url: 'https://example.com/a', events: ['*'] }, key);
    const again = await acme.client.post('/v1/webhook-endpoints', { url: 'https://example.com/a', events: ['*'] }, key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });
});

describe('delivery', () => {
  it('delivers a ping signed with the endpoint secret, with a stable webhook-id and the {type, timestamp, data} body', async () => {
    const receiver = await WebhookReceiver.start();
    const { client } = await newTenant('pinged');
    const endpoint = await register(client, `${receiver.url}/hooks`);
    const messageId = await ping(client, endpoint.id);
    await receiver.waitFor((r) => r.length === 1);
    const [got] = receiver.received;
    expect(got!.headers['webhook-id']).toBe(messageId);
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.path).toBe('/hooks');
    expect(verify(got!, endpoint.secret)).toEqual({
      type: 'webhook.ping',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: { endpoint_id: endpoint.id },
    });
    expect(verifies(got!, 'whsec_' + Buffer.alloc(32, 1).toString('base64'))).toBe(false);
    await waitUntil(async () => (await deliveryStates(messageId)).join() === 'delivered');
    const [attempt] = await attempts(client, endpoint.id);
    expect(attempt).toMatchObject({ message_id: messageId, type: 'webhook.ping', status: 200, response_excerpt: 'ok', error: null });
  });

  it('writes messages only in committed transactions, to the endpoints subscribed to their type', async () => {
    const receiver = await WebhookReceiver.start();
    const tenant = await newTenant('subscriber');
    const settled = await register(tenant.client, `${receiver.url}/settled`, ['job.settled']);
    await register(tenant.client, `${receiver.url}/all`, ['*']);
    const credited = {
      wallet_id: '0190d4c8-0000-7000-8000-000000000001',
      amount: '5.000000',
      currency: 'USD',
      balance: '5.000000',
      reference: null,
    };
    const kept = await withTransaction(db.pool, (tx) =>
      enqueueMessage(tx, { tenantId: tenant.id, type: 'wallet.credited', data: credited }),
    );
    let rolledBack = '';
    await expect(
      withTransaction(db.pool, async (tx) => {
        rolledBack = await enqueueMessage(tx, { tenantId: tenant.id, type: 'wallet.credited', data: credited });
        throw new Error('the effect failed');
      }),
    ).rejects.toThrow('the effect failed');
    const job = {
      id: '0190d4c8-0000-7000-8000-000000000002',
      state: 'captured',
      wallet_id: credited.wallet_id,
      model: 'm1',
      provider: 'p1',
    };
    const settledId = await withTransaction(db.pool, (tx) =>
      enqueueMessage(tx, {
        tenantId: tenant.id,
        type: 'job.settled',
        data: { charge_type: 'capture', amount: '1.000000', currency: 'USD', settlement_key: 'k', job },
      }),
    );
    await receiver.waitFor((r) => r.length === 3);
    expect(receiver.received.map((r) => `${r.path} ${r.headers['webhook-id']}`).sort()).toEqual(
      [`/all ${kept}`, `/all ${settledId}`, `/settled ${settledId}`].sort(),
    );
    expect((await db.pool.query('select 1 from outbound_messages where id = $1', [rolledBack])).rowCount).toBe(0);
    expect(receiver.received.filter((r) => r.path === '/settled').every((r) => verifies(r, settled.secret))).toBe(true);
    // In tests, a data that breaks its documented shape is refused at enqueue.
    await expect(
      withTransaction(db.pool, (tx) =>
        enqueueMessage(tx, { tenantId: tenant.id, type: 'wallet.credited', data: { ...credited, extra: 1 } as never }),
      ),
    ).rejects.toThrow(/breaks its schema/);
  });

  it('retries a 500 with backoff until a 2xx, each attempt logged, the same webhook-id every time', async () => {
    const receiver = await WebhookReceiver.start((_, index) => (index < 3 ? { status: 500, body: 'busy' } : { status: 204 }));
    const { client } = await newTenant('flaky');
    const endpoint = await register(client, receiver.url);
    const messageId = await ping(client, endpoint.id);
    await receiver.waitFor((r) => r.length === 4);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([messageId]));
    expect(receiver.received.every((r) => verifies(r, endpoint.secret))).toBe(true);
    await waitUntil(async () => (await deliveryStates(messageId)).join() === 'delivered');
    const log = await attempts(client, endpoint.id);
    expect(log.map((a) => a.status)).toEqual([204, 500, 500, 500]);
    expect(log[1]).toMatchObject({ response_excerpt: 'busy', error: null });
    const row = await db.pool.query(
      'select attempts, failing_since from webhook_endpoints e join outbound_deliveries d on d.endpoint_id = e.id where d.message_id = $1',
      [messageId],
    );
    expect(row.rows[0]).toMatchObject({ attempts: 3, failing_since: null });
  });

  it('gives up on a receiver that does not answer within the timeout, and tries again', async () => {
    const receiver = await WebhookReceiver.start((_, index) => (index === 0 ? 'hang' : { status: 200 }));
    const { client } = await newTenant('slow');
    const endpoint = await register(client, receiver.url);
    const messageId = await ping(client, endpoint.id);
    await waitUntil(async () => (await deliveryStates(messageId)).join() === 'delivered', 20_000);
    const log = await attempts(client, endpoint.id);
    expect(log.map((a) => a.status)).toEqual([200, null]);
    expect(log[1].error).toBe('no answer within 1000 ms');
    expect(log[1].latency_ms).toBeGreaterThanOrEqual(990);
  });

  it('never follows a redirect: a 3xx is a failure', async () => {
    const elsewhere = await WebhookReceiver.start();
    const receiver = await WebhookReceiver.start((_, index) =>
      index === 0 ? { status: 307, headers: { location: `${elsewhere.url}/stolen` } } : { status: 200 },
    );
    const { client } = await newTenant('redirected');
    const endpoint = await register(client, receiver.url);
    const messageId = await ping(client, endpoint.id);
    await waitUntil(async () => (await deliveryStates(messageId)).join() === 'delivered');
    const log = await attempts(client, endpoint.id);
    expect(log[1]).toMatchObject({ status: 307, error: `redirect not followed (307, location ${elsewhere.url}/stolen)` });
    expect(elsewhere.received).toEqual([]);
  });

  it('reads at most 64 KiB of an answer and keeps 1 KiB of it', async () => {
    const receiver = await WebhookReceiver.start(() => ({ status: 200, stream: 32 * 1024 * 1024 }));
    const { client } = await newTenant('chatty');
    const endpoint = await register(client, receiver.url);
    const messageId = await ping(client, endpoint.id);
    await waitUntil(async () => (await deliveryStates(messageId)).join() === 'delivered');
    const [attempt] = await attempts(client, endpoint.id);
    expect(attempt.response_excerpt).toBe('x'.repeat(1024));
    // Tally hung up long before the 32 MiB were written.
    await waitUntil(() => receiver.streams.length === 1 && receiver.streams[0]!.finished === false);
    expect(receiver.streams[0]!.written).toBeLessThan(32 * 1024 * 1024);
  });

  it('signs with both secrets during a rotation grace period, and with the new one alone after', async () => {
    const receiver = await WebhookReceiver.start();
    const { client } = await newTenant('rotating');
    const endpoint = await register(client, receiver.url);
    const rotated = await client.post(`/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { grace_seconds: 3600 });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    expect(Date.parse(rotated.body.previous_secret_expires_at)).toBeGreaterThan(Date.now() + 3500_000);
    await ping(client, endpoint.id);
    await receiver.waitFor((r) => r.length === 1);
    const [during] = receiver.received;
    expect(during!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verifies(during!, endpoint.secret)).toBe(true);
    expect(verifies(during!, rotated.body.secret)).toBe(true);

    const final = await client.post(`/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { grace_seconds: 0 });
    expect(final.body.previous_secret_expires_at).toBeNull();
    await ping(client, endpoint.id);
    await receiver.waitFor((r) => r.length === 2);
    const after = receiver.received[1]!;
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(verifies(after, final.body.secret)).toBe(true);
    expect(verifies(after, rotated.body.secret)).toBe(false);
    expect(verifies(after, endpoint.secret)).toBe(false);
  });

  it('replays a message and a time range under the same webhook-ids', async () => {
    const receiver = await WebhookReceiver.start();
    const tenant = await newTenant('replayer');
    const endpoint = await register(tenant.client, receiver.url, ['wallet.overdrawn']);
    const since = new Date(Date.now() - 1000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(
        await withTransaction(db.pool, (tx) =>
          enqueueMessage(tx, {
            tenantId: tenant.id,
            type: 'wallet.overdrawn',
            data: { wallet_id: 'w', currency: 'USD', balance: `-${i}.000000` },
          }),
        ),
      );
    }
    await receiver.waitFor((r) => r.length === 3);
    const one = await tenant.client.post(`/v1/webhook-messages/${ids[1]}/replay`);
    expect(one.body).toEqual({ message_id: ids[1], deliveries: 1 });
    await receiver.waitFor((r) => r.length === 4);
    expect(receiver.received[3]!.headers['webhook-id']).toBe(ids[1]);
    expect(receiver.received[3]!.body).toBe(receiver.withId(ids[1]!)[0]!.body);

    const range = await tenant.client.post(`/v1/webhook-endpoints/${endpoint.id}/replay`, { since });
    expect(range.status).toBe(202);
    expect(range.body).toMatchObject({ endpoint_id: endpoint.id, replayed: 3, next_since: null });
    await receiver.waitFor((r) => r.length === 7);
    expect(ids.map((id) => receiver.withId(id).length)).toEqual([2, 3, 2]);
    expect(receiver.received.every((r) => verifies(r, endpoint.secret))).toBe(true);

    const stranger = await newTenant('stranger');
    expect((await stranger.client.post(`/v1/webhook-messages/${ids[0]}/replay`)).status).toBe(404);
    expect((await stranger.client.post(`/v1/webhook-endpoints/${endpoint.id}/replay`, { since })).status).toBe(404);
    expect((await tenant.client.post(`/v1/webhook-endpoints/${endpoint.id}/replay`, { since: 'yesterday' })).body.error.param).toBe(
      'since',
    );
  });
});

describe("the receiver's guide example (examples/webhook-receiver.mjs)", () => {
  it('verifies, answers 204, and handles a replayed message once', async () => {
    const { client } = await newTenant('example');
    const port = await freePort();
    // Registered first: the example needs the secret to start.
    const endpoint = await register(client, `http://127.0.0.1:${port}/`);
    const example = spawn(process.execPath, [fileURLToPath(new URL('../../examples/webhook-receiver.mjs', import.meta.url))], {
      env: { ...process.env, WEBHOOK_SECRET: endpoint.secret, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    example.stdout!.on('data', (chunk) => (output += chunk));
    example.stderr!.on('data', (chunk) => (output += chunk));
    try {
      await waitUntil(() => output.includes('listening on'), 10_000);
      const messageId = await ping(client, endpoint.id);
      await waitUntil(() => output.includes(`received webhook.ping ${messageId}`));
      expect((await client.post(`/v1/webhook-messages/${messageId}/replay`)).status).toBe(202);
      await waitUntil(async () => (await deliveryStates(messageId)).join() === 'delivered,delivered');
      expect(output.split(`received webhook.ping ${messageId}`)).toHaveLength(2);
      expect((await attempts(client, endpoint.id)).map((a) => a.status)).toEqual([204, 204]);
      const forged = await fetch(`http://127.0.0.1:${port}/`, {
        method: 'POST',
        headers: { 'webhook-id': 'msg_x', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' },
        body: '{}',
      });
      expect(forged.status).toBe(401);
    } finally {
      example.kill('SIGKILL');
    }
  });
});

describe('failing endpoints', () => {
  const shortAdmin = new Client(shortLived.url);

  it('marks a delivery dead once its retry window has passed', async () => {
    const receiver = await WebhookReceiver.start(() => ({ status: 503 }));
    const created = await shortAdmin.post('/v1/tenants', { name: 'down-for-good' });
    const client = shortAdmin.as(created.body.api_key);
    const endpoint = await register(client, receiver.url);
    const messageId = await ping(client, endpoint.id);
    await waitUntil(async () => (await deliveryStates(messageId, shortDb.pool)).join() === 'dead', 20_000);
    expect(receiver.received.length).toBeGreaterThan(1);
    expect((await attempts(client, endpoint.id)).every((a) => a.status === 503)).toBe(true);
  });

  it('disables an endpoint failing for longer than the limit, with an alert; enabling and replaying delivers again', async () => {
    let healthy = false;
    const receiver = await WebhookReceiver.start(() => (healthy ? { status: 200 } : { status: 500 }));
    const created = await shortAdmin.post('/v1/tenants', { name: 'failing' });
    const tenantId: string = created.body.id;
    const client = shortAdmin.as(created.body.api_key);
    const endpoint = await register(client, receiver.url);
    const since = new Date(Date.now() - 1000).toISOString();
    // New messages keep it failing until the limit passes.
    await waitUntil(async () => {
      const view = await client.get(`/v1/webhook-endpoints/${endpoint.id}`);
      if (view.body.disabled) return true;
      const open = await shortDb.pool.query(
        `select 1 from outbound_deliveries where endpoint_id = $1 and state in ('pending', 'failed', 'delivering')`,
        [endpoint.id],
      );
      if (open.rowCount !== 0) return false;
      // The worker may disable it between the read above and this ping: then the ping is
      // refused as disabled, which is the state this loop waits for (checked below).
      const sent = await client.post(`/v1/webhook-endpoints/${endpoint.id}/ping`);
      if (sent.status === 409 && sent.body.error?.code === 'endpoint_disabled') return true;
      expect(sent.status, JSON.stringify(sent.body)).toBe(202);
      return false;
    }, 30_000);
    const view = (await client.get(`/v1/webhook-endpoints/${endpoint.id}`)).body;
    expect(view.disabled_reason).toMatch(/^failing since .* without a successful delivery$/);
    expect(view.failing_since).not.toBeNull();
    const alert = await shortDb.pool.query(
      `select tenant_id, detail from alerts where class = 'webhook_endpoint_disabled' and detail->>'endpoint_id' = $1`,
      [endpoint.id],
    );
    expect(alert.rows).toHaveLength(1);
    expect(alert.rows[0]).toMatchObject({ tenant_id: tenantId, detail: { url: `${receiver.url}/`, last_status: 500 } });
    expect((await client.post(`/v1/webhook-endpoints/${endpoint.id}/ping`)).body.error.code).toBe('endpoint_disabled');
    // Its open deliveries wait out of the claim's way until it is enabled.
    const due = await shortDb.pool.query(
      `select 1 from outbound_deliveries where endpoint_id = $1 and state in ('pending', 'failed') and next_attempt_at <> 'infinity'`,
      [endpoint.id],
    );
    expect(due.rowCount).toBe(0);

    healthy = true;
    const enabled = await client.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { disabled: false });
    expect(enabled.body).toMatchObject({ disabled: false, failing_since: null });
    const replayed = await client.post(`/v1/webhook-endpoints/${endpoint.id}/replay`, { since });
    expect(replayed.body.replayed).toBeGreaterThan(0);
    await waitUntil(
      async () =>
        (await shortDb.pool.query(`select 1 from outbound_deliveries where endpoint_id = $1 and state = 'delivered'`, [endpoint.id]))
          .rowCount! >= replayed.body.replayed,
    );
    await waitUntil(
      async () =>
        (
          await shortDb.pool.query(
            `select 1 from outbound_deliveries where endpoint_id = $1 and state in ('pending', 'failed', 'delivering')`,
            [endpoint.id],
          )
        ).rowCount === 0,
    );
  });
});

describe('destinations', () => {
  const strictAdmin = new Client(strict.url);

  it('refuses loopback, private, link-local and mapped addresses, and hosts resolving to them, unless allowed', async () => {
    const created = await strictAdmin.post('/v1/tenants', { name: 'ssrf' });
    const client = strictAdmin.as(created.body.api_key);
    const refused = async (url: string) => {
      const answer = await client.post('/v1/webhook-endpoints', { url, events: ['*'] });
      return `${answer.status} ${answer.body.error?.code} ${answer.body.error?.param}`;
    };
    for (const url of [
      'http://127.0.0.1:8080/',
      'http://10.0.0.1/',
      'http://[::1]:8080/',
      'http://localhost:8080/',
      'http://169.254.169.254/latest',
      'http://[::ffff:127.0.0.1]/',
      'http://[::127.0.0.1]/',
      'http://[::a00:1]/',
      'http://[::8.8.8.8]/',
      'http://100.64.0.1/',
      'http://0.0.0.0/',
      'http://2130706433/',
    ]) {
      expect(await refused(url), url).toBe('422 destination_not_allowed url');
    }
    for (const url of ['ftp://example.com/', 'http://user:secret@example.com/', 'not a url', 'file:///etc/passwd']) {
      expect(await refused(url), url).toBe('400 invalid_url url');
    }
    // The other server allows 127.0.0.1: the same URL is accepted there.
    expect(
      (await admin.as(created.body.api_key).post('/v1/webhook-endpoints', { url: 'http://127.0.0.1:8080/', events: ['*'] })).status,
    ).toBe(201);
  });

  it('checks the address actually connected to at delivery: a host re-pointed at loopback after registration is refused', async () => {
    const receiver = await WebhookReceiver.start();
    const policy = destinationPolicy({});
    let answer = '93.184.215.14';
    const resolver = async () => [{ address: answer, family: 4 }];
    await expect(checkRegistration(`http://rebinding.test:${receiver.port}/`, policy, resolver)).resolves.toBeInstanceOf(URL);
    answer = '127.0.0.1';
    await expect(checkRegistration(`http://rebinding.test:${receiver.port}/`, policy, resolver)).rejects.toBeInstanceOf(DestinationRefused);
    const message = {
      url: `http://rebinding.test:${receiver.port}/`,
      messageId: 'msg_x',
      body: '{}',
      secrets: ['whsec_' + Buffer.alloc(32, 3).toString('base64')],
    };
    const result = await deliver(message, { policy, timeoutMs: 1000, resolver });
    expect(result).toMatchObject({
      delivered: false,
      status: null,
      error: expect.stringContaining('destination refused: rebinding.test (127.0.0.1) is a loopback address'),
    });
    expect(receiver.received).toEqual([]);
    // Listed by the operator, by host or by CIDR, it is delivered to.
    for (const allowed of ['rebinding.test', '127.0.0.0/8', '.test']) {
      expect(
        (await deliver(message, { policy: destinationPolicy({ TALLY_OUTBOUND_ALLOW: allowed }), timeoutMs: 1000, resolver })).delivered,
        allowed,
      ).toBe(true);
    }
    // The deny list wins over the allow list.
    const denied = await deliver(message, {
      policy: destinationPolicy({ TALLY_OUTBOUND_ALLOW: '127.0.0.1', TALLY_OUTBOUND_DENY: 'rebinding.test' }),
      timeoutMs: 1000,
      resolver,
    });
    expect(denied.error).toContain('TALLY_OUTBOUND_DENY');
    expect(() => destinationPolicy({ TALLY_OUTBOUND_ALLOW: 'not a host!' })).toThrow(/TALLY_OUTBOUND_ALLOW/);
  });
});

describe('the retry schedule', () => {
  it('waits with full jitter under a doubling ceiling capped at 6 h, and is dead after about 72 h', () => {
    const schedule = { backoffFirstMs: 5000, backoffCapMs: 6 * 3600_000, retryForMs: 72 * 3600_000 };
    expect(afterFailure(1, 0, schedule, () => 1)).toEqual({ kind: 'retry', delayMs: 5000 });
    expect(afterFailure(3, 0, schedule, () => 0.5)).toEqual({ kind: 'retry', delayMs: 10_000 });
    expect(afterFailure(30, 0, schedule, () => 1)).toEqual({ kind: 'retry', delayMs: 6 * 3600_000 });
    expect(afterFailure(30, 70 * 3600_000, schedule, () => 0.5)).toEqual({ kind: 'dead' });
    // Waiting every ceiling in full, the schedule passes 72 h after about two dozen attempts.
    let age = 0;
    let n = 0;
    for (
      let outcome = afterFailure(1, 0, schedule, () => 1);
      outcome.kind === 'retry';
      outcome = afterFailure(++n + 1, age, schedule, () => 1)
    )
      age += outcome.delayMs;
    expect(n).toBeGreaterThanOrEqual(20);
    expect(n).toBeLessThanOrEqual(26);
  });
});
