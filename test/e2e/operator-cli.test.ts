import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { ADMIN_TOKEN, TALLY_BIN, freePort, startServer } from '../support/server.js';
import { Client, TEST_SECRET } from '../support/client.js';
import { uniqueName } from '../support/fixtures.js';

/**
 * The operator commands and send-webhook as an operator runs them: the built CLI as a
 * child process, against a real `serve` on the test database, over HTTP only.
 */

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 1 });
const admin = new Client(server.url);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function tally(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  const child = spawn(process.execPath, [TALLY_BIN, ...args], {
    env: { ...process.env, DATABASE_URL: undefined, TALLY_API_KEY: undefined, TALLY_URL: server.url, TALLY_ADMIN_TOKEN: ADMIN_TOKEN, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

/** A run that must succeed; its stdout, trimmed. */
async function ok(args: string[], env?: Record<string, string | undefined>): Promise<string> {
  const run = await tally(args, env);
  expect(run.code, `tally ${args.join(' ')}:\n${run.stderr}${run.stdout}`).toBe(0);
  return run.stdout.trim();
}

/** A tenant with a funded USD wallet, a generic provider and a priced model, made with the CLI. */
async function cliWorld(credit = '5.00') {
  const tenant = JSON.parse(await ok(['tenants', 'create', 'cli tenant']));
  expect(tenant).toMatchObject({ name: 'cli tenant', id: expect.any(String), api_key: expect.stringMatching(/^tk_/) });
  const key = tenant.api_key as string;
  const wallet = await ok(['wallets', 'create', 'USD', '--field', 'id'], { TALLY_API_KEY: key });
  await ok(['wallets', 'credit', wallet, credit]);
  const provider = uniqueName('cli');
  await ok(['providers', 'create', provider, '--kind', 'generic', '--secret', TEST_SECRET, '--cancel-grace-seconds', '60']);
  const model = `cli/${randomBytes(4).toString('hex')}`; // a "/" travels percent-encoded
  await ok(['prices', 'publish', model, '--currency', 'USD', '--unit-price', 'input_tokens=1.00', '--unit-price', 'output_tokens=2.00']);
  return { key, wallet, provider, model };
}

async function submit(world: Awaited<ReturnType<typeof cliWorld>>): Promise<string> {
  return ok(['jobs', 'submit', '--token', world.key, '--wallet', world.wallet, '--provider', world.provider, '--model', world.model, '--limit', 'input_tokens=10000', '--limit', 'output_tokens=5000', '--field', 'id']);
}

describe('operator commands over the HTTP API', () => {
  it('create, credit, publish, register, submit, send a webhook, wait, show: the exact balance', async () => {
    const world = await cliWorld();
    const provider = JSON.parse((await tally(['providers', 'create', uniqueName('p'), '--secret', TEST_SECRET, '--failed-with-usage', 'capture'])).stdout);
    expect(provider).toMatchObject({ kind: 'generic', secrets_count: 1, policies: { failed_with_usage: 'capture' } });

    // A credit retried with its Idempotency-Key is applied once.
    const first = JSON.parse(await ok(['wallets', 'credit', world.wallet, '1.50', '--idempotency-key', 'pay_1', '--reference', 'pay_1']));
    const again = JSON.parse(await ok(['wallets', 'credit', world.wallet, '1.50', '--idempotency-key', 'pay_1', '--reference', 'pay_1']));
    expect(again).toEqual(first);
    expect(first).toMatchObject({ entry_type: 'credit', amount: '1.500000', reference: 'pay_1' });

    const job = await submit(world);
    const sent = await tally(['send-webhook', '--provider', world.provider, '--secret', TEST_SECRET, '--job', job, '--usage', 'input_tokens=1200', '--usage', 'output_tokens=340', '--id', `evt_${job}`]);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^HTTP 200\n/);
    expect(JSON.parse(sent.stdout.slice('HTTP 200\n'.length))).toEqual({ status: 'accepted', event_key: `evt_${job}` });
    const duplicate = await tally(['send-webhook', '--provider', world.provider, '--secret', TEST_SECRET, '--job', job, '--type', 'job.completed', '--usage', 'input_tokens=1200', '--usage', 'output_tokens=340', '--id', `evt_${job}`]);
    expect(duplicate.stdout).toContain('"already_accepted"');

    const settled = JSON.parse(await ok(['jobs', 'wait', job, '--state', 'captured']));
    // 1200 × 1.00/1M + 340 × 2.00/1M = 0.001880
    expect(settled).toMatchObject({ id: job, state: 'captured', captured: '0.001880', released: '0.018120' });
    expect(await ok(['jobs', 'show', job, '--field', 'settlements.0.amount'])).toBe('0.001880');
    expect(await ok(['wallets', 'show', world.wallet, '--field', 'balance'])).toBe('6.498120');
    const entries = JSON.parse(await ok(['wallets', 'entries', world.wallet, '--limit', '2', '--token', world.key]));
    expect(entries.data.map((e: { entry_type: string }) => e.entry_type)).toEqual(['release_remainder', 'capture']);
    // What the CLI said is what the API holds.
    expect((await admin.get(`/v1/wallets/${world.wallet}`)).body.balance).toBe('6.498120');
  });

  it("prints an error answer's status, code, message and param, and exits 1", async () => {
    const world = await cliWorld();
    const amount = await tally(['wallets', 'credit', world.wallet, '1.5e3']);
    expect(amount.code).toBe(1);
    expect(amount.stdout).toBe('');
    expect(amount.stderr).toMatch(/^tally wallets credit: 400 invalid_amount: .+/);

    const unknown = await tally(['jobs', 'show', '0193a1b2-0000-7000-8000-000000000000']);
    expect(unknown).toMatchObject({ code: 1, stderr: 'tally jobs show: 404 not_found: job not found\n' });

    const forbidden = await tally(['tenants', 'create', 'nope', '--token', world.key]);
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toMatch(/^tally tenants create: 403 forbidden: /);

    const exists = await tally(['providers', 'create', world.provider, '--secret', TEST_SECRET]);
    expect(exists.code).toBe(1);
    expect(exists.stderr).toMatch(/^tally providers create: 409 provider_exists: /);

    const job = await submit(world);
    const forged = await tally(['send-webhook', '--provider', world.provider, '--secret', `whsec_${randomBytes(24).toString('base64')}`, '--job', job, '--usage', 'input_tokens=1']);
    expect(forged.code).toBe(1);
    expect(forged.stdout).toMatch(/^HTTP 401\n[\s\S]*"invalid_signature"/);

    const noField = await tally(['wallets', 'show', world.wallet, '--field', 'nothing']);
    expect(noField.code).toBe(1);
    expect(noField.stderr).toMatch(/^tally wallets show: no_such_field: /);
  });

  it('exits 2 when no call can be made: no server, no tenant key', async () => {
    const down = await tally(['tenants', 'create', 'x'], { TALLY_URL: `http://127.0.0.1:${await freePort()}` });
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(/no answer from http:\/\/127\.0\.0\.1:\d+\/v1\/tenants .*is `tally serve` running there\?/);

    const credit = await tally(['wallets', 'credit', 'w', '1.00', '--url', `http://127.0.0.1:${await freePort()}`]);
    expect(credit.code).toBe(2);
    expect(credit.stderr).toMatch(/retry with --idempotency-key cli_[0-9a-f-]+: it applies at most once/);

    const noKey = await tally(['wallets', 'create', 'USD']);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("this is a tenant's call");
  });

  it('jobs wait stops at the state asked for, another terminal state, or the timeout', async () => {
    const world = await cliWorld();
    const released = await submit(world);
    expect((await tally(['send-webhook', '--provider', world.provider, '--secret', TEST_SECRET, '--job', released, '--type', 'failed'])).code).toBe(0);
    const wrong = await tally(['jobs', 'wait', released, '--state', 'captured']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toBe(`tally jobs wait: job_ended: job ${released} ended released, not captured\n`);
    expect(await ok(['jobs', 'wait', released, '--field', 'state'])).toBe('released');

    const idle = await submit(world);
    const timeout = await tally(['jobs', 'wait', idle, '--timeout', '1']);
    expect(timeout.code).toBe(1);
    expect(timeout.stderr).toBe(`tally jobs wait: wait_timeout: job ${idle} is still reserved after 1 s\n`);
  });
});

describe('jobs list and cancel, grants create, statement (issue 37 item 8)', () => {
  it('jobs list filters by wallet and state and pages; jobs cancel is the tenant\'s, and answers the job', async () => {
    const world = await cliWorld();
    const [older, newer] = [await submit(world), await submit(world)];
    const listed = JSON.parse(await ok(['jobs', 'list', '--wallet', world.wallet]));
    expect(listed.data.map((j: { id: string }) => j.id)).toEqual([newer, older]);
    expect(listed.data[0]).toMatchObject({ id: newer, state: 'reserved', wallet_id: world.wallet, tenant_id: expect.any(String) });
    const page = JSON.parse(await ok(['jobs', 'list', '--wallet', world.wallet, '--limit', '1']));
    expect(page).toMatchObject({ data: [{ id: newer }], has_more: true });
    expect(await ok(['jobs', 'list', '--wallet', world.wallet, '--limit', '1', '--starting-after', newer, '--field', 'data.0.id'])).toBe(older);

    expect(await ok(['jobs', 'cancel', older, '--token', world.key, '--field', 'state'])).toBe('cancel_requested');
    const canceled = JSON.parse(await ok(['jobs', 'list', '--wallet', world.wallet, '--state', 'cancel_requested']));
    expect(canceled.data.map((j: { id: string }) => j.id)).toEqual([older]);
    // The tenant's own key lists its jobs too.
    expect(JSON.parse(await ok(['jobs', 'list', '--state', 'reserved'], { TALLY_API_KEY: world.key, TALLY_ADMIN_TOKEN: undefined })).data).toEqual([
      expect.objectContaining({ id: newer }),
    ]);

    const state = await tally(['jobs', 'list', '--state', 'done']);
    expect(state.code).toBe(1);
    expect(state.stderr).toMatch(/^tally jobs list: 400 invalid_request: the query parameter state must be one of "reserved", .* \(param: state\)\n$/);
    // The admin cannot cancel a tenant's job: the API's 403, said as every refusal is.
    const asAdmin = await tally(['jobs', 'cancel', newer, '--token', ADMIN_TOKEN]);
    expect(asAdmin.code).toBe(1);
    expect(asAdmin.stderr).toMatch(/^tally jobs cancel: 403 forbidden: /);
    const noKey = await tally(['jobs', 'cancel', newer]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("this is a tenant's call");
  });

  it('grants create prints the key it made, and a retry with that key creates nothing more', async () => {
    const world = await cliWorld('1.00');
    const args = ['grants', 'create', world.wallet, '--amount', '2.50', '--category', 'promotional', '--priority', '10', '--reference', 'spring'];
    const first = await tally([...args, '--expires-at', '2999-01-01T00:00:00Z']);
    expect(first.code, first.stderr).toBe(0);
    const key = /Idempotency-Key (cli_[0-9a-f-]+) \(to retry this grant, pass --idempotency-key \1: it is created at most once\)/.exec(first.stderr)?.[1];
    expect(key, first.stderr).toBeDefined();
    const grant = JSON.parse(first.stdout);
    expect(grant).toMatchObject({ amount: '2.500000', category: 'promotional', priority: 10, reference: 'spring', expires_at: '2999-01-01T00:00:00.000000Z' });

    const retry = await tally([...args, '--expires-at', '2999-01-01T00:00:00Z', '--idempotency-key', key!]);
    expect(retry.code).toBe(0);
    expect(retry.stderr).toBe(''); // a key given is not printed again
    expect(JSON.parse(retry.stdout)).toEqual(grant);
    // 1.00 credited, 2.50 granted once: 3.50 however often it was retried.
    expect(await ok(['wallets', 'show', world.wallet, '--field', 'balance'])).toBe('3.500000');

    const paid = await ok(['grants', 'create', world.wallet, '--amount', '1.00', '--category', 'paid', '--effective-at', '2999-01-01T00:00:00Z', '--field', 'status']);
    expect(paid).toBe('scheduled');
    const wrong = await tally(['grants', 'create', world.wallet, '--amount', '1.00', '--category', 'gift']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/argument 'gift' is invalid\. Allowed choices are paid, promotional/);
    const tooLarge = await tally(['grants', 'create', world.wallet, '--amount', '99999999999999999999', '--category', 'paid', '--idempotency-key', 'g-too-large']);
    expect(tooLarge.code).toBe(1);
    expect(tooLarge.stderr).toMatch(/^tally grants create: 400 invalid_amount: amount "99999999999999999999" is too large: at most 10\^12 major units/);
  });

  it('statement --to in the future ends now, and says which instant it used', async () => {
    const world = await cliWorld();
    const run = await tally(['statement', world.wallet, '--from', '2020-01-01T00:00:00Z', '--to', '2999-01-01T00:00:00Z']);
    expect(run.code, run.stderr).toBe(0);
    const used = /^tally statement: --to 2999-01-01T00:00:00Z is in the future; the statement ends now instead, at (\S+Z) \(statements cover the past only\)\n$/.exec(run.stderr)?.[1];
    expect(used, run.stderr).toBeDefined();
    expect(Math.abs(Date.parse(used!) - Date.now())).toBeLessThan(60_000);
    const statement = JSON.parse(run.stdout);
    expect(Date.parse(statement.to)).toBe(Date.parse(used!));
    expect(statement.closing.balance).toBe('5.000000');
    // A past --to is sent as given, without a note; the API still refuses a future one itself.
    const past = await tally(['statement', world.wallet, '--from', '2020-01-01T00:00:00Z', '--to', '2021-01-01T00:00:00Z', '--field', 'to']);
    expect(past).toMatchObject({ code: 0, stderr: '' });
    const api = await admin.get(`/v1/wallets/${world.wallet}/statement?from=2020-01-01T00:00:00Z&to=2999-01-01T00:00:00Z`);
    expect(api.status).toBe(400);
    expect(api.body.error).toMatchObject({ code: 'invalid_request', param: 'to' });
  });
});

describe('GET / and GET /v1', () => {
  it('/ sends a person to the console; /v1 names the service and links to its description, which declares it', async () => {
    const root = await fetch(`${server.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/console');
    const home = await fetch(`${server.url}/v1`);
    expect(home.status).toBe(200);
    expect(await home.json()).toMatchObject({ service: 'tally', version: expect.any(String), links: { console: '/console', openapi: '/openapi.json', health: '/healthz' } });
    const doc = (await admin.get('/openapi.json')).body;
    expect(doc.paths['/v1'].get.responses['200'].content['application/json'].schema.required).toEqual(expect.arrayContaining(['service', 'version', 'links']));
  });
});
