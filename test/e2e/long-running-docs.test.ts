import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '../support/client.js';
import { removeDataDir } from '../support/run-root.js';
import { freePort, runTally, waitUntil, type TallyProcess } from '../support/server.js';

/**
 * docs/long-running-jobs.md's worked example, run as written: its shell blocks between the
 * markers, with bash, against a fresh `tally serve` on a fresh embedded database (as the
 * README's quickstart test does), so the page cannot drift from what the service does.
 */

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

async function exampleBlocks(): Promise<string[]> {
  const page = await readFile(join(ROOT, 'docs/long-running-jobs.md'), 'utf8');
  const section = /<!-- long-running:start -->([\s\S]*?)<!-- long-running:end -->/.exec(page)?.[1];
  if (!section) throw new Error('docs/long-running-jobs.md has no example between its markers');
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

function freshEnv(dataDir: string, port: number): NodeJS.ProcessEnv {
  const unset = { DATABASE_URL: undefined, TALLY_ADMIN_TOKEN: undefined, TALLY_API_KEY: undefined, TALLY_URL: undefined, HOST: undefined };
  return { ...process.env, ...unset, TALLY_DATA_DIR: dataDir, PORT: String(port) };
}

const servers: TallyProcess[] = [];
const dataDirs: string[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop('SIGTERM')));
  await Promise.all(dataDirs.map(removeDataDir));
});

describe('docs/long-running-jobs.md', () => {
  it('grows a job twice, runs one out and cancels it, extends one by hand: the amounts the page says', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'tally-long-running-'));
    dataDirs.push(dataDir);
    const port = await freePort();
    const serve = runTally(['serve'], { ...freshEnv(dataDir, port), LOG_LEVEL: 'warn' });
    servers.push(serve);
    await waitUntil(async () => {
      if (serve.child.exitCode !== null) throw new Error(`serve exited: ${serve.output()}`);
      return (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.status === 200;
    }, 60_000);
    await waitUntil(() => serve.output().includes('Tally is ready'), 10_000);

    const script = `${(await exampleBlocks()).join('\n')}\nprintf 'EXAMPLE %s %s %s %s\\n' "$JOB" "$JOB2" "$JOB3" "$WALLET"\n`;
    const child = spawn('bash', ['-c', `set -euo pipefail\n${script}`], {
      cwd: ROOT,
      env: freshEnv(dataDir, port),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code, `bash failed:\n${stderr}\n${stdout}`).toBe(0);

    const [, job, job2, job3, wallet] = /^EXAMPLE (\S+) (\S+) (\S+) (\S+)$/m.exec(stdout)!;
    const printed = stdout.trimEnd().split('\n');
    expect(printed.at(-2)).toBe('4.340000'); // the balance the page ends with
    // what `jobs wait --state settled --field hold_exhausted` printed for the job that ran out
    const exhausted = JSON.parse(printed.find((line) => line.startsWith('{"reason"'))!) as Record<string, string>;
    expect(exhausted).toMatchObject({ reason: 'max_limits', reserved: '1.800000', usage_price: '1.400000' });

    const token = /^TALLY_ADMIN_TOKEN=(\S+)/m.exec(serve.output())![1]!;
    const api = new Client(`http://127.0.0.1:${port}`, token);
    const first = (await api.get(`/v1/jobs/${job}`)).body;
    expect(first).toMatchObject({
      state: 'captured',
      reserved: '2.400000',
      captured: '2.200000',
      released: '0.200000',
      limits: { gpu_seconds: 1200 },
    });
    expect(first.extensions.map((x: { version: number; amount: string; source: string }) => [x.version, x.amount, x.source])).toEqual([
      [1, '0.600000', 'auto'],
      [2, '0.600000', 'auto'],
    ]);
    const second = (await api.get(`/v1/jobs/${job2}`)).body;
    expect(second).toMatchObject({
      state: 'captured',
      reserved: '1.800000',
      captured: '1.760000',
      released: '0.040000',
      hold_exhausted: null,
    });
    const third = (await api.get(`/v1/jobs/${job3}`)).body;
    expect(third).toMatchObject({ state: 'captured', reserved: '1.800000', captured: '1.700000' });
    expect(third.extensions).toEqual([expect.objectContaining({ version: 1, source: 'api', amount: '0.600000' })]);
    expect((await api.get(`/v1/wallets/${wallet}`)).body).toMatchObject({ balance: '4.340000', reserved: '0.000000' });
  });
});
