import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Run as root from a checkout the `postgres` user cannot enter (under a folder of mode
 * 700, like /root): PostgreSQL, which refuses to run as root, runs as `postgres`; it can
 * reach neither the installed binaries nor the data folder. The binaries are copied to
 * the OS temp dir and the cluster lives under /var/tmp, recorded in cluster.json. A real
 * `tally migrate` from such a checkout must start, migrate and stop the server.
 */
const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const isRoot = process.getuid?.() === 0;

const sealed = await mkdtemp(join(tmpdir(), 'tally-sealed-')); // mode 0700: postgres cannot enter
const temp = await mkdtemp(join(tmpdir(), 'tally-sealed-tmp-'));
let pgdata: string | null = null;
afterAll(async () => {
  if (pgdata) await rm(pgdata, { recursive: true, force: true });
  await rm(sealed, { recursive: true, force: true });
  await rm(temp, { recursive: true, force: true });
});

function tally(checkout: string, env: NodeJS.ProcessEnv, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, [join(checkout, 'bin', 'tally'), ...args], { cwd: checkout, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => resolveRun({ code, output }));
  });
}

describe.skipIf(!isRoot || process.platform !== 'linux')('the embedded PostgreSQL from a checkout the postgres user cannot enter', () => {
  it('copies the binaries to the temp dir, keeps the cluster under /var/tmp, and migrate starts and stops it', { timeout: 120_000 }, async () => {
    // A checkout inside the sealed folder: its own copy of bin/, dist/ and migrations/
    // (Node runs modules from their real path), the installed packages linked.
    const checkout = join(sealed, 'tally');
    await mkdir(checkout);
    for (const part of ['bin', 'dist', 'migrations', 'package.json']) await cp(join(ROOT, part), join(checkout, part), { recursive: true });
    await symlink(join(ROOT, 'node_modules'), join(checkout, 'node_modules'));
    await chmod(temp, 0o755); // where the copy of the binaries goes: the postgres user must enter it
    const dataDir = join(checkout, '.tally');
    const env: NodeJS.ProcessEnv = { ...process.env, TALLY_DATA_DIR: dataDir, TMPDIR: temp, LOG_LEVEL: 'info' };
    delete env.DATABASE_URL;

    const first = await tally(checkout, env, ['migrate']);
    expect(first.code, first.output).toBe(0);
    const cluster = JSON.parse(readFileSync(join(dataDir, 'cluster.json'), 'utf8')) as { pgdata: string };
    pgdata = cluster.pgdata;
    expect(pgdata.startsWith('/var/tmp/tally-pg-')).toBe(true);
    expect(statSync(join(pgdata, 'PG_VERSION')).isFile()).toBe(true);
    const copies = readdirSync(temp).filter((entry) => entry.startsWith('tally-embedded-postgres-'));
    expect(copies).toHaveLength(1);
    const copiedAt = readFileSync(join(temp, copies[0]!, '.complete'), 'utf8');
    expect(existsSync(join(dataDir, 'running.json'))).toBe(false); // stopped at exit
    expect(existsSync(join(pgdata, 'postmaster.pid'))).toBe(false);

    // And again: the copy and the cluster are reused, the migrations already applied.
    const second = await tally(checkout, env, ['migrate']);
    expect(second.code, second.output).toBe(0);
    expect(readFileSync(join(temp, copies[0]!, '.complete'), 'utf8')).toBe(copiedAt);
    expect(existsSync(join(pgdata, 'postmaster.pid'))).toBe(false);
  });
});
