import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { refuseCapturesOnDemand } from '../support/refused-captures.js';
import { freePort, runTally, startServer, waitUntil } from '../support/server.js';
import { Client, deliver, signDelivery } from '../support/client.js';
import { createWorld, submitJob } from '../support/world.js';
import { providerEvent, send, settledJob } from '../support/jobs.js';

/**
 * Issue 17.5, logs and metrics an operator can use. Against a real `tally serve` with
 * its in-process worker, logging at info: its stdout is the pino stream read here.
 * One line per decision — a settlement written, a webhook refused, an event
 * dead-lettered, a reconciliation exception raised — with the job, tenant, settlement
 * key and event it is about; metric names without a repeated prefix and with a
 * provider label; a request id returned in x-request-id and named in the request's lines.
 */
const db = await freshDatabase();
const server = await startServer(db.url, {
  workers: 1,
  env: {
    LOG_LEVEL: 'info',
    // One failed attempt dead-letters the event, so the test needs no minute of retries.
    TALLY_MAX_ATTEMPTS: '1',
    TALLY_POLL_INTERVAL_MS: '100',
    // The reconciliation run in the test is the only one: it raises the exception.
    TALLY_RECONCILE_INTERVAL_SECONDS: '0',
  },
});
const admin = new Client(server.url);

// A capture refused by the database on every attempt, for the listed jobs only: the
// worker dead-letters the completion (the same device as test/e2e/discard.test.ts).
const refusals = await refuseCapturesOnDemand(db.pool);

const USAGE = { input_tokens: 1200, output_tokens: 340 }; // 0.001880 of a 0.020000 hold

type LogLine = Record<string, any>;

/** Every complete JSON line the server has written so far (the token line and the like are not JSON). */
function logLines(): LogLine[] {
  const output = server.output();
  const complete = output.slice(0, output.lastIndexOf('\n') + 1);
  const lines: LogLine[] = [];
  for (const text of complete.split('\n')) {
    if (!text.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(text));
    } catch {
      // not a log line
    }
  }
  return lines;
}

function linesWhere(msg: string, fields: Record<string, unknown>): LogLine[] {
  return logLines().filter((line) => line.msg === msg && Object.entries(fields).every(([k, v]) => line[k] === v));
}

/** The log is written after the commit, so it may trail the API by a moment: wait for the line itself. */
async function logLine(msg: string, fields: Record<string, unknown>): Promise<LogLine> {
  try {
    await waitUntil(() => linesWhere(msg, fields).length > 0, 20_000);
  } catch (error) {
    const seen = logLines().filter((line) => line.msg === msg);
    throw new Error(`no '${msg}' line with ${JSON.stringify(fields)}; lines with that message: ${JSON.stringify(seen)}`, { cause: error });
  }
  return linesWhere(msg, fields)[0]!;
}

const INFO = 30;
const WARN = 40;
const ERROR = 50;

describe('decision log lines', () => {
  it('a capture logs one settlement written line, once, with its key, amount, job, tenant and event', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);
    const eventId = `msg_${randomUUID()}`;
    await send(server.url, world, providerEvent(world, job.id, 'job.completed', { usage: USAGE }), eventId);
    await settledJob(world, job.id, 'captured', { events: 1 });

    const key = `${world.tenantId}:${job.id}:capture:1`;
    const line = await logLine('settlement written', { settlement_key: key });
    expect(line).toMatchObject({
      level: INFO,
      settlement_key: key,
      charge_type: 'capture',
      amount: '0.001880',
      released: '0.018120',
      currency: 'USD',
      job_id: job.id,
      tenant_id: world.tenantId,
      provider: world.provider,
      event_id: eventId,
      job_state: 'captured',
    });

    // The provider re-emits the completion under a new id: it settles as no effect and
    // returns the first settlement, and no second line claims a settlement was written.
    const again = `msg_${randomUUID()}`;
    await send(server.url, world, providerEvent(world, job.id, 'job.completed', { usage: USAGE }), again);
    const view = await settledJob(world, job.id, 'captured', { events: 2 });
    expect(view.events.find((e) => e.event_key === again)).toMatchObject({ state: 'no_effect' });
    // The server's one worker loop settles and reports one event after another: once a
    // later job's line is there, the re-emission's report has run.
    const later = await submitJob(world);
    await send(server.url, world, providerEvent(world, later.id, 'job.completed', { usage: USAGE }), `msg_${randomUUID()}`);
    await logLine('settlement written', { job_id: later.id });
    expect(linesWhere('settlement written', { job_id: job.id })).toHaveLength(1);
  });

  it('a refused webhook logs its code, status, reason and provider, with the job and event once they are known', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);

    // A forged signature: refused before anything else is known, the event id unverified.
    const forged = signDelivery(providerEvent(world, job.id, 'job.completed', { usage: USAGE }), { secret: 'whsec_bm90IHRoZSBwcm92aWRlcidzIHNlY3JldA==' });
    const refused = await deliver(server.url, world.provider, forged);
    expect(refused.status).toBe(401);
    const requestId = refused.headers.get('x-request-id');
    const signature = await logLine('webhook refused', { request_id: requestId });
    expect(signature).toMatchObject({ level: WARN, provider: world.provider, code: 'invalid_signature', status: 401 });
    expect(signature.reason).toContain('signature verification failed');
    expect(signature).not.toHaveProperty('event_id');
    expect(signature).not.toHaveProperty('job_id');

    // The model disagrees with the job: the job, tenant and event are named.
    const eventId = `msg_${randomUUID()}`;
    const mismatch = await deliver(server.url, world.provider, signDelivery(providerEvent(world, job.id, 'job.started', { model: 'another-model' }), { id: eventId }));
    expect(mismatch.status).toBe(422);
    const line = await logLine('webhook refused', { request_id: mismatch.headers.get('x-request-id') });
    expect(line).toMatchObject({
      level: WARN,
      code: 'event_mismatch',
      status: 422,
      provider: world.provider,
      event_id: eventId,
      job_id: job.id,
      tenant_id: world.tenantId,
    });
    expect(line.reason).toContain('model');

    // No such provider: the line names what the path asked for.
    const unknown = await deliver(server.url, 'no-such-provider', signDelivery({ type: 'job.started', data: {} }));
    expect(unknown.status).toBe(404);
    expect(await logLine('webhook refused', { request_id: unknown.headers.get('x-request-id') })).toMatchObject({ provider: 'no-such-provider', code: 'not_found', status: 404 });
  });

  it('a dead letter logs the event, job, tenant, attempts and last error; reconciliation logs the exception it raises, once', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);
    await refusals.refuse(job.id);
    const eventId = `msg_${randomUUID()}`;
    await send(server.url, world, providerEvent(world, job.id, 'job.completed', { usage: USAGE }), eventId);
    await settledJob(world, job.id, 'reserved', { events: 1 });

    const dead = await logLine('event dead-lettered', { event_id: eventId });
    expect(dead).toMatchObject({ level: ERROR, provider: world.provider, job_id: job.id, tenant_id: world.tenantId, event_type: 'job.completed', attempts: 1 });
    expect(dead.last_error).toContain('refused for good');

    const run = await admin.post('/v1/reconciliation/runs', {});
    expect(run.status, JSON.stringify(run.body)).toBe(201);
    const exception = run.body.exceptions.find((e: any) => e.class === 'event_dead' && e.objects.event_key === eventId);
    expect(exception, JSON.stringify(run.body.exceptions)).toBeDefined();
    const line = await logLine('reconciliation exception', { exception_id: exception.id });
    expect(line).toMatchObject({
      level: WARN,
      class: 'event_dead',
      run_id: run.body.id,
      provider: world.provider,
      event_id: eventId,
      job_id: job.id,
      request_id: run.headers.get('x-request-id'),
    });
    expect(line.detail.held).toMatchObject({ amount: '0.020000', wallet_id: world.walletId });

    // Found again by the next run, still open: raised once, so not logged again.
    const second = await admin.post('/v1/reconciliation/runs', {});
    expect(second.body.exceptions.map((e: any) => e.id)).toContain(exception.id);
    await logLine('request completed', { request_id: second.headers.get('x-request-id') });
    expect(linesWhere('reconciliation exception', { exception_id: exception.id })).toHaveLength(1);
  });
});

describe('request ids', () => {
  it('every answer carries x-request-id: a sane incoming one is kept, any other replaced by a generated one', async () => {
    const given = `trace-${randomUUID()}`;
    const kept = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': given } });
    expect(kept.headers.get('x-request-id')).toBe(given);

    const generated = await fetch(`${server.url}/healthz`);
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);

    for (const insane of ['x'.repeat(201), 'two words', 'tab\there']) {
      const answer = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': insane } });
      expect(answer.headers.get('x-request-id'), insane).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect((await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': 'x'.repeat(200) } })).headers.get('x-request-id')).toBe('x'.repeat(200));

    // Errors and unknown routes too.
    const refused = await admin.as(null).post('/v1/tenants', { name: 'nobody' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const missing = await admin.get('/no/such/route');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    // A path Fastify cannot decode is answered by the framework-error handler (api/errors.ts).
    const undecodable = await admin.get('/v1/jobs/%E0%A4%A');
    expect(undecodable.body.error.code).toBe('not_found');
    expect(undecodable.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("names the request in every line it logs, as request_id", async () => {
    const given = `trace-${randomUUID()}`;
    const answer = await deliver(server.url, 'no-such-provider', { body: '{}', headers: { 'content-type': 'application/json', 'x-request-id': given } });
    expect(answer.status).toBe(404);
    expect(answer.headers.get('x-request-id')).toBe(given);
    await logLine('request completed', { request_id: given });
    const lines = logLines().filter((line) => line.request_id === given);
    expect(lines.map((line) => line.msg)).toEqual(['webhook refused', 'request completed']);
    expect(logLines().filter((line) => JSON.stringify(line).includes(given))).toHaveLength(2);
    // The request's one line says what was asked and how it ended.
    expect(lines[1]).toMatchObject({ req: { method: 'POST', url: '/v1/webhooks/no-such-provider' }, res: { statusCode: 404 } });
    expect(typeof lines[1]!.responseTime).toBe('number');
  });
});

describe('/metrics', () => {
  it('names every metric once-prefixed, and labels webhooks and settle latency by provider', async () => {
    const world = await createWorld(admin);
    const job = await submitJob(world);
    await send(server.url, world, providerEvent(world, job.id, 'job.completed', { usage: USAGE }), `msg_${randomUUID()}`);
    await settledJob(world, job.id, 'captured', { events: 1 });
    await deliver(server.url, world.provider, signDelivery(providerEvent(world, job.id, 'job.started'), { secret: 'whsec_bm90IHRoZSBwcm92aWRlcidzIHNlY3JldA==' }));
    await deliver(server.url, 'no-such-provider', signDelivery({ type: 'job.started', data: {} }));

    const response = await fetch(`${server.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBeTruthy();
    const text = await response.text();
    const names = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThan(30);
    expect(text).not.toContain('process_process');
    for (const name of names) {
      expect(name, 'one namespace per name: tally_, or the standard process_ / nodejs_').toMatch(/^(tally|process|nodejs)_/);
      expect(name, 'no segment repeated').not.toMatch(/(^|_)([a-z]+)_\2(_|$)/);
    }
    // docs/operations/metrics.md lists each of these.
    expect(names).toEqual(
      expect.arrayContaining([
        'tally_webhooks_total',
        'tally_settle_duration_seconds',
        'tally_settlements',
        'tally_queue_depth',
        'tally_oldest_pending_event_age_seconds',
        'tally_dead_letters',
        'tally_db_statements_total',
        'tally_db_commits_total',
        'process_cpu_seconds_total',
        'nodejs_eventloop_lag_seconds',
      ]),
    );
    const provider = world.provider;
    expect(text).toMatch(new RegExp(`^tally_webhooks_total\\{outcome="accepted",provider="${provider}"\\} [1-9]`, 'm'));
    expect(text).toMatch(new RegExp(`^tally_webhooks_total\\{outcome="invalid_signature",provider="${provider}"\\} [1-9]`, 'm'));
    // An unknown name in the path is not a label value (anyone could make new series).
    expect(text).toMatch(/^tally_webhooks_total\{outcome="not_found",provider="_unknown"\} [1-9]/m);
    expect(text).not.toContain('no-such-provider');
    expect(text).toMatch(new RegExp(`^tally_settle_duration_seconds_count\\{outcome="applied",provider="${provider}"\\} [1-9]`, 'm'));
    expect(text).toMatch(/^tally_settlements\{charge_type="capture"\} [1-9]/m);
    // Counted at the driver: the deliveries above were statements and commits of this process.
    expect(text).toMatch(/^tally_db_statements_total [1-9]/m);
    expect(text).toMatch(/^tally_db_commits_total [1-9]/m);
  });
});

describe('a standalone worker with --metrics-port', () => {
  it('serves its own metrics — its settlements and its statements — behind the metrics token', async () => {
    const port = await freePort();
    const worker = runTally(['worker', '--concurrency', '1', '--metrics-port', String(port)], {
      DATABASE_URL: db.url,
      HOST: '127.0.0.1',
      TALLY_METRICS_TOKEN: 'worker-metrics-token',
      TALLY_RECONCILE_INTERVAL_SECONDS: '0',
    });
    try {
      const url = `http://127.0.0.1:${port}/metrics`;
      const scrape = () => fetch(url, { headers: { authorization: 'Bearer worker-metrics-token' } }).catch(() => null);
      await waitUntil(async () => {
        if (worker.child.exitCode !== null) throw new Error(`tally worker exited: ${worker.output()}`);
        return (await scrape())?.status === 200;
      }, 30_000);
      expect((await fetch(url)).status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
      // Its claims are statements of its own, counted at the driver.
      await waitUntil(async () => /^tally_db_statements_total [1-9]/m.test(await (await scrape())!.text()));
      const text = await (await scrape())!.text();
      expect(text).toMatch(/^# TYPE tally_settle_duration_seconds histogram$/m);
      expect(text).toMatch(/^tally_queue_depth \d+$/m);
    } finally {
      expect(await worker.stop()).toBe(0);
    }
  });
});
