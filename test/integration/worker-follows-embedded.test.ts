import { mkdtemp } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Client, deliver, signDelivery } from '../support/client.js';
import { removeDataDir } from '../support/run-root.js';
import { freePort, runTally, waitUntil, type TallyProcess } from '../support/server.js';
import { completion, createWorld, submitJob } from '../support/world.js';

/**
 * `tally worker` beside an embedded `serve` (no DATABASE_URL: both use the PostgreSQL
 * recorded in TALLY_DATA_DIR/running.json). serve owns that server; when serve stops,
 * the server stops, and the next serve starts one on a new port. The worker must find
 * it again and settle, and meanwhile say so in a few lines, not a stack trace per poll.
 * Real processes throughout; the poll interval is short so a log line per poll shows.
 */
const OUTAGE_MS = 3_000;
const POLL_INTERVAL_MS = 100;

const dataDir = await mkdtemp(join(tmpdir(), 'tally-worker-follows-'));
const processes: TallyProcess[] = [];
afterAll(async () => {
  // SIGTERM: serve stops the embedded server it owns (a SIGKILLed serve leaves it running).
  await Promise.all(processes.map((p) => p.stop('SIGTERM')));
  await removeDataDir(dataDir); // with its cluster, in /var/tmp when we are root
});

const env = { TALLY_DATA_DIR: dataDir, DATABASE_URL: undefined, PORT: undefined, LOG_LEVEL: 'info', TALLY_POLL_INTERVAL_MS: String(POLL_INTERVAL_MS) };
const runningPort = () => {
  const path = join(dataDir, 'running.json');
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { port: number }).port : null;
};

async function serve(): Promise<{ proc: TallyProcess; url: string }> {
  const port = await freePort();
  const proc = runTally(['serve', '--port', String(port), '--workers', '0'], { ...env, HOST: '127.0.0.1' });
  processes.push(proc);
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(async () => {
    if (proc.child.exitCode !== null) throw new Error(`tally serve exited: ${proc.output()}`);
    return (await fetch(`${url}/healthz`).catch(() => null))?.status === 200;
  }, 60_000);
  return { proc, url };
}

describe('tally worker beside an embedded serve', () => {
  it('finds the restarted server on its new port and settles, logging a bounded number of lines and no stack meanwhile', async () => {
    const first = await serve();
    const firstPort = runningPort();
    const worker = runTally(['worker', '--concurrency', '2'], env);
    processes.push(worker);
    await waitUntil(() => worker.output().includes('worker started') || worker.child.exitCode !== null, 60_000);
    expect(worker.child.exitCode, worker.output()).toBeNull();

    const world = await createWorld(new Client(first.url));
    // The worker settles on the first server: it really works beside serve.
    const before = await submitJob(world, { input_tokens: 100, output_tokens: 10 });
    await deliver(first.url, world.provider, signDelivery(completion(world, before.id, { input_tokens: 100, output_tokens: 10 })));
    await waitUntil(async () => (await world.tenant.get(`/v1/jobs/${before.id}`)).body.state === 'captured');
    const job = await submitJob(world, { input_tokens: 100, output_tokens: 10 });

    expect(await first.proc.stop('SIGTERM')).toBe(0);
    const outageStart = worker.output().length;
    // The claim is about a duration: how much the worker says while the database is away.
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    const second = await serve();
    expect(runningPort()).not.toBe(firstPort);
    const outageLog = worker.output().slice(outageStart);

    const lines = outageLog.split('\n').filter((l) => l.trim() !== '');
    expect(lines.length, `the worker logged during the outage:\n${outageLog}`).toBeLessThanOrEqual(10);
    expect(outageLog, 'no stack traces').not.toMatch(/\\n\s+at |"stack"/);

    const answer = await deliver(second.url, world.provider, signDelivery(completion(world, job.id, { input_tokens: 100, output_tokens: 10 })));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const tenant = new Client(second.url, world.apiKey);
    await waitUntil(async () => (await tenant.get(`/v1/jobs/${job.id}`)).body.state === 'captured' || worker.child.exitCode !== null, 30_000);
    expect(worker.child.exitCode, `the worker exited:\n${worker.output()}`).toBeNull();
    const view = (await tenant.get(`/v1/jobs/${job.id}`)).body;
    expect(view).toMatchObject({ state: 'captured', captured: '0.000120' });

    expect(await worker.stop('SIGTERM')).toBe(0);
  });
});
