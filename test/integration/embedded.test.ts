import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { freePort } from '../../bench/free-port.js';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

/**
 * The shared embedded PostgreSQL, exercised with real `./bin/tally` processes: no
 * mocks. Every case gets a fresh TALLY_DATA_DIR; every wait is on a condition (an
 * exit event, /healthz answering, a process disappearing from /proc), never a sleep.
 */

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const BIN = join(ROOT, 'bin', 'tally');

interface Tally {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: Tally[] = [];
const dataDirs: string[] = [];

function tally(dataDir: string, args: string[], spawnOptions: { detached?: boolean } = {}): Tally {
  const env: NodeJS.ProcessEnv = { ...process.env, TALLY_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  delete env.PORT;
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], ...spawnOptions });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) =>
    child.once('exit', (code, signal) => resolveExit({ code, signal })),
  );
  const handle = { child, output: () => output, exited };
  started.push(handle);
  return handle;
}

async function finished(run: Tally): Promise<number | null> {
  const { code, signal } = await run.exited;
  if (code !== 0) console.error(`tally exited with ${code ?? signal}:\n${run.output()}`);
  return code;
}

async function stopWith(run: Tally, signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  run.child.kill(signal);
  return run.exited;
}


/** Resolves once a condition holds; polls because there is no event to wait on. */
async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A `serve` on a free port, resolved once /healthz answers 200; rejects if it exits first. */
async function serve(dataDir: string, spawnOptions: { detached?: boolean } = {}): Promise<Tally & { port: number }> {
  const port = await freePort();
  const run = tally(dataDir, ['serve', '--port', String(port), '--workers', '0'], spawnOptions);
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  void run.exited.then((e) => (exit = e));
  await until(`serve on port ${port} answers /healthz`, async () => {
    if (exit) throw new Error(`serve exited (${exit.code ?? exit.signal}) before answering:\n${run.output()}`);
    const status = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.status,
      () => 0,
    );
    return status === 200;
  }, 45_000);
  return { ...run, port };
}

async function freshDataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-embedded-test-'));
  dataDirs.push(dir);
  return dir;
}

interface Cluster {
  pgdata: string;
  password: string;
}
const cluster = (dataDir: string) => JSON.parse(readFileSync(join(dataDir, 'cluster.json'), 'utf8')) as Cluster;
const running = (dataDir: string) =>
  existsSync(join(dataDir, 'running.json'))
    ? (JSON.parse(readFileSync(join(dataDir, 'running.json'), 'utf8')) as { port: number; ownerPid: number })
    : null;

/** Live (non-zombie) processes whose working directory is the cluster: the postmaster and its children. */
function postgresProcesses(pgdata: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`) !== pgdata) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

/** Postmasters of that cluster: `postgres -D <pgdata>` processes. */
function postmasters(pgdata: string): number[] {
  return postgresProcesses(pgdata).filter((pid) => {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return args.some((a, i) => a === '-D' && args[i + 1] === pgdata);
    } catch {
      return false;
    }
  });
}

async function query(dataDir: string, sql: string): Promise<pg.QueryResult> {
  const { password } = cluster(dataDir);
  const { port } = running(dataDir)!;
  const client = new pg.Client({ host: 'localhost', port, user: 'postgres', password, database: 'tally' });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

beforeAll(() => {
  // These tests run the built CLI; `npm test` builds first.
  const built = join(ROOT, 'dist', 'dev-db', 'server.js');
  if (!existsSync(built) || statSync(built).mtimeMs < statSync(join(ROOT, 'src', 'dev-db', 'server.ts')).mtimeMs) {
    throw new Error('dist/ is missing or older than src/dev-db/server.ts: run `npm run build` (npm test does)');
  }
});

afterEach(async () => {
  for (const run of started.splice(0)) if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
});

afterAll(async () => {
  // Stop whatever a failed case left behind (only the clusters of our own data dirs), then remove them.
  for (const dir of dataDirs) {
    const pgdata = existsSync(join(dir, 'cluster.json')) ? cluster(dir).pgdata : null;
    if (pgdata) {
      for (const pid of postgresProcesses(pgdata)) process.kill(pid, 'SIGKILL');
      await rm(pgdata, { recursive: true, force: true });
    }
    await rm(dir, { recursive: true, force: true });
  }
});

// /proc tells which processes run on a cluster.
describe.skipIf(process.platform !== 'linux')('the embedded PostgreSQL shared through TALLY_DATA_DIR', () => {
  it('serve starts one server, migrate shares it, data persists, SIGTERM and Ctrl-C exit 0 and stop it', async () => {
    const dataDir = await freshDataDir();
    const first = await serve(dataDir);
    const { pgdata } = cluster(dataDir);
    const info = running(dataDir)!;
    expect(info.ownerPid).toBe(first.child.pid);
    const [postmaster] = postmasters(pgdata);
    expect(postmasters(pgdata)).toEqual([postmaster]);

    const migrate = tally(dataDir, ['migrate']);
    expect(await finished(migrate)).toBe(0);
    expect(running(dataDir)).toEqual(info);
    expect(postmasters(pgdata)).toEqual([postmaster]);

    await query(dataDir, 'create table persisted (v text)');
    await query(dataDir, `insert into persisted values ('kept')`);

    expect(await stopWith(first, 'SIGTERM')).toEqual({ code: 0, signal: null });
    expect(running(dataDir)).toBeNull();
    expect(postgresProcesses(pgdata)).toEqual([]);

    // In its own process group, so that a terminal's Ctrl-C can be imitated: SIGINT to
    // the whole group. The server is in a session of its own; the command stops it.
    const second = await serve(dataDir, { detached: true });
    expect(postmasters(pgdata)).toHaveLength(1);
    expect((await query(dataDir, 'select v from persisted')).rows).toEqual([{ v: 'kept' }]);
    process.kill(-second.child.pid!, 'SIGINT');
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(running(dataDir)).toBeNull();
    expect(postgresProcesses(pgdata)).toEqual([]);
  });

  it('after serve is SIGKILLed the next serve takes the server over and stops it on SIGTERM', async () => {
    const dataDir = await freshDataDir();
    const first = await serve(dataDir);
    const { pgdata } = cluster(dataDir);
    await query(dataDir, 'create table persisted (v text)');
    await query(dataDir, `insert into persisted values ('kept')`);
    const [postmaster] = postmasters(pgdata);

    expect(await stopWith(first, 'SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(postmasters(pgdata)).toEqual([postmaster]); // the orphaned server still runs

    const second = await serve(dataDir);
    expect(postmasters(pgdata)).toEqual([postmaster]); // reused, not a second one
    expect(running(dataDir)!.ownerPid).toBe(second.child.pid);
    expect((await query(dataDir, 'select v from persisted')).rows).toEqual([{ v: 'kept' }]);

    expect(await stopWith(second, 'SIGTERM')).toEqual({ code: 0, signal: null });
    expect(running(dataDir)).toBeNull();
    expect(postgresProcesses(pgdata)).toEqual([]);
  });

  it('a stale postmaster.pid (serve and postmaster SIGKILLed) does not prevent the next start', async () => {
    const dataDir = await freshDataDir();
    const first = await serve(dataDir);
    const { pgdata } = cluster(dataDir);
    await query(dataDir, 'create table persisted (v text)');
    await query(dataDir, `insert into persisted values ('kept')`);
    const [postmaster] = postmasters(pgdata);

    expect(await stopWith(first, 'SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    process.kill(postmaster!, 'SIGKILL');
    await until('the killed postmaster is gone', () => !postgresProcesses(pgdata).includes(postmaster!));
    expect(existsSync(join(pgdata, 'postmaster.pid'))).toBe(true);

    const second = await serve(dataDir);
    expect(postmasters(pgdata)).toHaveLength(1);
    expect((await query(dataDir, 'select v from persisted')).rows).toEqual([{ v: 'kept' }]);
    expect(await stopWith(second, 'SIGTERM')).toEqual({ code: 0, signal: null });
    expect(postgresProcesses(pgdata)).toEqual([]);
  });

  it('two serves started at the same instant on a fresh data dir share one server', async () => {
    for (let round = 0; round < 2; round++) {
      const dataDir = await freshDataDir();
      const [a, b] = await Promise.all([serve(dataDir), serve(dataDir)]);
      const { pgdata } = cluster(dataDir);
      expect(postmasters(pgdata)).toHaveLength(1);
      const owner = running(dataDir)!.ownerPid === a.child.pid ? a : b;
      const other = owner === a ? b : a;
      expect([a.child.pid, b.child.pid]).toContain(running(dataDir)!.ownerPid);

      expect(await stopWith(other, 'SIGTERM')).toEqual({ code: 0, signal: null });
      expect(postmasters(pgdata)).toHaveLength(1); // the owner's server outlives the other serve
      expect((await fetch(`http://127.0.0.1:${owner.port}/healthz`)).status).toBe(200);

      expect(await stopWith(owner, 'SIGTERM')).toEqual({ code: 0, signal: null });
      expect(running(dataDir)).toBeNull();
      expect(postgresProcesses(pgdata)).toEqual([]);
    }
  });
});
