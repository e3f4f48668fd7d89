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
