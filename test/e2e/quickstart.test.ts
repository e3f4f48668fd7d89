import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '../support/client.js';
import { removeDataDir } from '../support/run-root.js';
import { freePort, runTally, waitUntil, type TallyProcess } from '../support/server.js';

/**
 * README.md's quickstart, run as written: the shell blocks between its markers, with
 * bash, against a fresh `serve` on a fresh embedded database (TALLY_DATA_DIR in a temp
 * folder, a free PORT), so the README cannot drift from what the service does. The
 * first block is `npm start`, which the test runs itself (the README runs the rest in
 * a second terminal); the others go to bash unchanged, after `set -euo pipefail`.
 */

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CREDIT = 10_000_000n; // 10.00 credited, in micro-units
const CAPTURED = 1200n * 3n + 340n * 15n; // 1200 × 3.00/10⁶ + 340 × 15.00/10⁶ = 0.008700

function micros(amount: string): bigint {
  const [units, decimals = ''] = amount.split('.');
  return BigInt(units!) * 1_000_000n + BigInt(decimals.padEnd(6, '0'));
}

async function quickstartBlocks(): Promise<string[]> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const section = /<!-- quickstart:start -->([\s\S]*?)<!-- quickstart:end -->/.exec(readme)?.[1];
  if (!section) throw new Error('README.md has no quickstart between <!-- quickstart:start --> and <!-- quickstart:end -->');
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** The environment of a fresh clone's terminal: no credentials or database chosen. */
function freshEnv(dataDir: string, port: number): NodeJS.ProcessEnv {
  // undefined, not deleted: spawn leaves such a variable out, and runTally's defaults do not come back.
  const unset = { DATABASE_URL: undefined, TALLY_ADMIN_TOKEN: undefined, TALLY_API_KEY: undefined, TALLY_URL: undefined, HOST: undefined };
  return { ...process.env, ...unset, TALLY_DATA_DIR: dataDir, PORT: String(port) };
}

/** `npm start`'s command (package.json), on the given data folder and port; resolves once /healthz answers. */
async function npmStart(dataDir: string, port: number): Promise<TallyProcess> {
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  expect(pkg.scripts.start).toBe('node ./bin/tally serve');
  const env = freshEnv(dataDir, port);
  const serve = runTally(['serve'], { ...env, LOG_LEVEL: 'warn' });
  servers.push(serve);
  await waitUntil(async () => {
    if (serve.child.exitCode !== null) throw new Error(`serve exited: ${serve.output()}`);
    return (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.status === 200;
  }, 60_000);
  // The banner comes after the listen; /healthz may answer a moment before it is written.
  await waitUntil(() => serve.output().includes('Tally is ready'), 10_000);
  return serve;
}

async function bash(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('bash', ['-c', `set -euo pipefail\n${script}`], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

const servers: TallyProcess[] = [];
const dataDirs: string[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop('SIGTERM')));
  // With its cluster: as root, that is in /var/tmp (the postgres user cannot enter a mkdtemp folder).
  await Promise.all(dataDirs.map(removeDataDir));
});

describe("README's quickstart", () => {
  it('goes from npm start to a captured job and the exact balance, as written', async () => {
    const started = performance.now();
    const blocks = await quickstartBlocks();
    expect(blocks[0]!.trim()).toBe('npm start');
    const dataDir = await mkdtemp(join(tmpdir(), 'tally-quickstart-'));
    dataDirs.push(dataDir);
    const port = await freePort();
    const serve = await npmStart(dataDir, port);
    const serverUp = performance.now();

    // The steps run as pasted; one line after them hands the test the shell's variables.
    const script = `${blocks.slice(1).join('\n')}\nprintf 'QUICKSTART %s %s\\n' "$JOB" "$WALLET"\n`;
    const run = await bash(script, freshEnv(dataDir, port));
    const stepsDone = performance.now();
    expect(run.code, `bash failed:\n${run.stderr}\n${run.stdout}`).toBe(0);

    const [, job, wallet] = /^QUICKSTART (\S+) (\S+)$/m.exec(run.stdout)!;
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.at(-2)).toBe('9.991300'); // what `wallets show --field balance` printed, as the README says

    // Checked apart from the CLI, over the API, with the token serve printed.
    const token = /^TALLY_ADMIN_TOKEN=(\S+) \(.*kept in (\S+),/m.exec(serve.output());
    expect(token, serve.output()).not.toBeNull();
    expect(token![2]).toBe(join(dataDir, 'admin-token'));
    const api = new Client(`http://127.0.0.1:${port}`, token![1]!);
    const jobView = (await api.get(`/v1/jobs/${job}`)).body;
    expect(jobView).toMatchObject({ state: 'captured', captured: '0.008700', released: '0.051300', reserved: '0.060000' });
    expect(jobView.events).toEqual([expect.objectContaining({ type: 'job.completed', state: 'applied' })]);
    const walletView = (await api.get(`/v1/wallets/${wallet}`)).body;
    expect(micros(walletView.balance)).toBe(CREDIT - CAPTURED);
    expect(walletView).toMatchObject({ balance: '9.991300', reserved: '0.000000', available: '9.991300' });

    console.log(
      `quickstart: ${Math.round(stepsDone - started)} ms in all (server up ${Math.round(serverUp - started)} ms, README steps ${Math.round(stepsDone - serverUp)} ms)`,
    );
  });

  it('keeps the admin token across a restart, in a file only its owner reads', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'tally-quickstart-token-'));
    dataDirs.push(dataDir);
    const tokenOf = (output: string) => /^TALLY_ADMIN_TOKEN=(\S+)/m.exec(output)?.[1];

    const first = await npmStart(dataDir, await freePort());
    const token = tokenOf(first.output());
    expect(token).toMatch(/^\S{20,}$/);
    expect(first.output()).toContain(`Tally is ready: http://127.0.0.1:`);
    // The banner's first step follows the ready line once serve has counted the tenants (a query).
    await waitUntil(() => first.output().includes('First step, in another terminal'), 10_000);
    expect(first.output()).toMatch(/API description \(OpenAPI 3\): http:\/\/127\.0\.0\.1:\d+\/openapi\.json/);
    expect(first.output()).toMatch(/First step, in another terminal: TALLY_URL=http:\/\/127\.0\.0\.1:\d+ \.\/bin\/tally tenants create acme/);
    expect((await stat(join(dataDir, 'admin-token'))).mode & 0o777).toBe(0o600);
    expect(await first.stop('SIGTERM')).toBe(0);

    const port = await freePort();
    const second = await npmStart(dataDir, port);
    expect(tokenOf(second.output())).toBe(token);
    const tenant = await new Client(`http://127.0.0.1:${port}`, token!).post('/v1/tenants', { name: 'after restart' });
    expect(tenant.status).toBe(201);
  });
});
