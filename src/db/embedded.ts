import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { chmod, chown, link, mkdir, mkdtemp, open, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';
import { postgresBinaries, type PostgresBinaries } from './embedded-binaries.js';
import {
  postgresRunAs,
  processAlive,
  processCwd,
  processStartTime,
  userCanReach,
  type SystemUser,
} from './postgres-user.js';

/**
 * One embedded PostgreSQL per data folder (TALLY_DATA_DIR), shared by every command:
 * the first command that needs it starts it and records how to reach it in
 * `running.json`; later commands connect to that one. The command that started it
 * stops it when it exits.
 *
 * A SIGKILLed owner leaves the server running (it runs in its own session, so a
 * terminal's Ctrl-C or hang-up reaches only the command, which then stops it in
 * order). The next command finds it — through running.json, or postmaster.pid when
 * running.json was not written yet — and takes it over: it becomes the owner, so the
 * server is stopped when that command exits rather than running forever.
 *
 * Files in the data folder: cluster.json (where the cluster is, its password),
 * running.json (port and owner of the running server), start.lock (held while a
 * command starts, adopts or stops the server), postgres.log (the server's log).
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
  /** the owner's start time (/proc), so a reused pid is not taken for the owner */
  ownerStarted?: string | null;
  postmasterPid?: number;
}

export interface EmbeddedServer {
  url: string;
  /** true when this process started (or took over) the server and must stop it */
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

/** A failure an operator can act on; the message says what to do. */
export class EmbeddedStartError extends Error {}

const ADVICE = 'Set TALLY_DATA_DIR to a folder you can write, or DATABASE_URL to use your own PostgreSQL.';

export async function startEmbedded(options: EmbeddedOptions): Promise<EmbeddedServer> {
  const dataDir = resolve(options.dataDir);
  const log = options.log ?? (() => {});
  try {
    await mkdir(dataDir, { recursive: true });
  } catch (error) {
    throw new EmbeddedStartError(`cannot create the data folder ${dataDir} (${(error as Error).message}). ${ADVICE}`);
  }
  let release: (() => Promise<void>) | null = null;
  try {
    release = await acquireStartLock(dataDir);
    const runAs = postgresRunAs();
    const cluster = await loadOrCreateClusterFile(dataDir, runAs);
    const found = await findRunning(dataDir, cluster, log);
    if (found) return found;
    return await startOwned(dataDir, cluster, runAs, options, log);
  } catch (error) {
    if (error instanceof EmbeddedStartError) throw error;
    const reason = `${(error as Error).message ?? String(error)}`.replace(/\.?$/, '.');
    throw new EmbeddedStartError(`the embedded PostgreSQL could not start: ${reason} ${ADVICE}`);
  } finally {
    await release?.();
  }
}

/**
 * The URL of the embedded server running.json names now, if it answers; null otherwise
 * (stopped, not yet started, or shutting down). Starts nothing and takes nothing over:
 * a worker beside `serve` uses it to follow the server when serve restarts on a new
 * port, without becoming the owner of a server serve expects to own.
 */
export async function runningEmbeddedUrl(dataDir: string): Promise<string | null> {
  const cluster = await readJson<ClusterFile>(join(resolve(dataDir), 'cluster.json'));
  const running = await readJson<RunningFile>(join(resolve(dataDir), 'running.json'));
  if (!cluster || !running) return null;
  const url = urlOf(cluster, running.port);
  return (await answers(url)) ? url : null;
}

/** A server of this cluster that already runs: shared, or taken over when its owner is gone. */
async function findRunning(dataDir: string, cluster: ClusterFile, log: (message: string) => void): Promise<EmbeddedServer | null> {
  const running = await readJson<RunningFile>(join(dataDir, 'running.json'));
  if (running && (await answers(urlOf(cluster, running.port, 'postgres')))) {
    const ownerGone = running.ownerPid !== process.pid && !processAlive(running.ownerPid, running.ownerStarted);
    const postmaster = ownerGone ? livePostmaster(cluster.pgdata) : null;
    if (postmaster && postmaster.port === running.port) {
      log(`taking over the embedded PostgreSQL on port ${running.port} (its owner, process ${running.ownerPid}, is gone)`);
      return await adopt(dataDir, cluster, postmaster);
    }
    log(`using the embedded PostgreSQL already running on port ${running.port}`);
    await ensureDatabase(urlOf(cluster, running.port));
    return { url: urlOf(cluster, running.port), owner: false, stop: async () => {} };
  }
  // No usable running.json: its owner may have been killed before writing it, or the
  // server is starting up or shutting down. postmaster.pid tells.
  const postmaster = livePostmaster(cluster.pgdata);
  if (!postmaster) return null;
  const url = urlOf(cluster, postmaster.port, 'postgres');
  await until(60_000, async () => !processAlive(postmaster.pid) || (await answers(url)));
  if (!processAlive(postmaster.pid)) return null;
  if (!(await answers(url))) {
    throw new EmbeddedStartError(
      `a PostgreSQL server (pid ${postmaster.pid}) runs on ${cluster.pgdata} but does not answer on port ${postmaster.port}; stop it (kill ${postmaster.pid}) and retry`,
    );
  }
  log(`taking over the embedded PostgreSQL on port ${postmaster.port} (pid ${postmaster.pid}), which no command owned`);
  return await adopt(dataDir, cluster, postmaster);
}

interface Postmaster {
  pid: number;
  port: number;
  /** its start time, so that a later process reusing the pid is never signalled */
  started: string | null;
  /** set when this process spawned it */
  child?: ChildProcess;
}

/** Whether the postmaster still runs (for our child: until its exit is reported). */
function postmasterRuns({ child, pid, started }: Postmaster): boolean {
  return child ? child.exitCode === null && child.signalCode === null : processAlive(pid, started);
}

function signal(postmaster: Postmaster, name: NodeJS.Signals): void {
  if (!postmasterRuns(postmaster)) return;
  try {
    process.kill(postmaster.pid, name);
  } catch {
    // exited meanwhile
  }
}

async function adopt(dataDir: string, cluster: ClusterFile, postmaster: Postmaster): Promise<EmbeddedServer> {
  await ensureDatabase(urlOf(cluster, postmaster.port));
  return await ownedServer(dataDir, cluster, postmaster, true);
}

async function startOwned(
  dataDir: string,
  cluster: ClusterFile,
  runAs: SystemUser | null,
  options: EmbeddedOptions,
  log: (message: string) => void,
): Promise<EmbeddedServer> {
  const binaries = await postgresBinaries(runAs, log);
  if (!existsSync(join(cluster.pgdata, 'PG_VERSION'))) {
    log(`initialising a new PostgreSQL cluster in ${cluster.pgdata}`);
    await initialise(cluster, binaries, runAs, options.persistent ?? true);
  }
  await clearStalePidFile(cluster.pgdata, log);
  const postmaster = await spawnPostmaster(dataDir, cluster, binaries, runAs, options, log);
  try {
    await ensureDatabase(urlOf(cluster, postmaster.port));
    return await ownedServer(dataDir, cluster, postmaster, options.persistent ?? true);
  } catch (error) {
    await terminate(postmaster);
    throw error;
  }
}

/** The handle of a server this process must stop: on stop(), or at the latest when it exits. */
async function ownedServer(dataDir: string, cluster: ClusterFile, postmaster: Postmaster, persistent: boolean): Promise<EmbeddedServer> {
  const record: RunningFile = {
    port: postmaster.port,
    ownerPid: process.pid,
    ownerStarted: processStartTime(process.pid),
    postmasterPid: postmaster.pid,
  };
  await writeFileAtomic(join(dataDir, 'running.json'), JSON.stringify(record));
  let stopped = false;
  // If we exit without stop() (an uncaught error, process.exit), still stop the server:
  // signal it now, synchronously; it shuts down on its own.
  const stopOnExit = () => {
    removeRunningFileSync(dataDir, record);
    signal(postmaster, 'SIGINT');
  };
  process.once('exit', stopOnExit);
  return {
    url: urlOf(cluster, postmaster.port),
    owner: true,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', stopOnExit);
      // Hold the start lock while stopping, so a command starting meanwhile waits and
      // then starts a new server, instead of finding this one half shut down.
      const release = await acquireStartLock(dataDir, 15_000).catch(() => null);
      try {
        removeRunningFileSync(dataDir, record);
        await terminate(postmaster);
        if (!persistent) await rm(cluster.pgdata, { recursive: true, force: true });
      } finally {
        await release?.();
      }
    },
  };
}

/** Removes running.json only if it still describes our server (a later owner may have replaced it). */
function removeRunningFileSync(dataDir: string, record: RunningFile): void {
  const path = join(dataDir, 'running.json');
  try {
    const current = JSON.parse(readFileSync(path, 'utf8')) as RunningFile;
    if (current.ownerPid === record.ownerPid && current.port === record.port) rmSync(path, { force: true });
  } catch {
    // missing or unreadable: nothing of ours to remove
  }
}

/** Fast shutdown (SIGINT); immediate shutdown (SIGQUIT) if that takes longer than 30 s. */
async function terminate(postmaster: Postmaster): Promise<void> {
  const { child } = postmaster;
  const gone = () => !postmasterRuns(postmaster);
  if (gone()) return;
  const exited = child
    ? new Promise<void>((r) => {
        child.ref();
        child.once('exit', () => r());
      })
    : null;
  // A postmaster that is not our child is waited for by polling: no event exists.
  const waitGone = (ms: number) =>
    exited
      ? Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(gone()), ms).unref())])
      : until(ms, async () => gone()).then(gone);
  signal(postmaster, 'SIGINT');
  if (await waitGone(30_000)) return;
  signal(postmaster, 'SIGQUIT');
  await waitGone(10_000);
}

async function spawnPostmaster(
  dataDir: string,
  cluster: ClusterFile,
  binaries: PostgresBinaries,
  runAs: SystemUser | null,
  options: EmbeddedOptions,
  log: (message: string) => void,
): Promise<Postmaster> {
  const logPath = join(dataDir, 'postgres.log');
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const logFile = await openLog(logPath);
    const logStart = (await logFile.stat()).size;
    let child: ChildProcess;
    try {
      child = spawn(
        binaries.postgres,
        [
          '-D', cluster.pgdata,
          '-p', String(port),
          '-c', 'listen_addresses=localhost',
          '-c', 'unix_socket_directories=',
          '-c', 'max_connections=400',
          ...(options.postgresFlags ?? []),
        ],
        {
          // Its own session: a terminal's Ctrl-C / hang-up signals the command, which
          // stops the server after its own graceful shutdown; not both at once.
          detached: true,
          stdio: ['ignore', logFile.fd, logFile.fd],
          cwd: dirname(binaries.postgres),
          ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
        },
      );
    } finally {
      await logFile.close();
    }
    child.unref();
    let exitedWith: string | null = null;
    let failed: Error | null = null;
    child.once('exit', (code, signal) => (exitedWith = String(code ?? signal)));
    child.once('error', (error) => (failed = error));
    const url = urlOf(cluster, port, 'postgres');
    // Crash recovery after a kill can take a while; a failure shows as the process exiting.
    await until(300_000, async () => exitedWith !== null || failed !== null || (await answers(url)));
    if (exitedWith === null && failed === null && child.pid) {
      log(`embedded PostgreSQL started on port ${port} (data ${cluster.pgdata}, log ${logPath})`);
      return { pid: child.pid, port, started: processStartTime(child.pid), child };
    }
    const output = (await readFile(logPath, 'utf8').catch(() => '')).slice(logStart);
    if (exitedWith === null && failed === null) {
      await terminate({ pid: child.pid!, port, started: null, child });
      throw new EmbeddedStartError(`the embedded PostgreSQL (data ${cluster.pgdata}) did not accept connections within 5 minutes; see ${logPath}`);
    }
    const portTaken = /could not bind|could not create any TCP\/IP sockets|Address already in use/i.test(output);
    if (portTaken && attempt < 5) {
      log(`port ${port} was taken meanwhile; retrying on another`);
      continue;
    }
    const reason = failed ? (failed as Error).message : lastLines(output) || `it exited with ${exitedWith}`;
    throw new EmbeddedStartError(`the embedded PostgreSQL (data ${cluster.pgdata}) did not start: ${reason}. Its log is ${logPath}.`);
  }
}

async function openLog(path: string) {
  // Keep one previous log; the server writes through the descriptor we hand it, so
  // it needs no access to the data folder itself.
  const size = (await stat(path).catch(() => null))?.size ?? 0;
  if (size > 10 * 1024 * 1024) await rename(path, `${path}.1`).catch(() => {});
  return await open(path, 'a', 0o600);
}

/** The end of the server's output, without timestamps: why it stopped. */
function lastLines(text: string): string {
  return text
    .split('\n')
    .map((l) => l.replace(/^\d{4}-\d\d-\d\d [\d:.]+ \S+ \[\d+\] /, '').trim())
    .filter((l) => l !== '' && !/^(LOG|HINT|DETAIL):\s+database system is shut down/.test(l))
    .slice(-3)
    .join(' ');
}

/**
 * initdb into a fresh sibling folder, renamed into place when complete: a start that
 * was interrupted mid-initdb leaves no half-made cluster that looks initialised.
 */
async function initialise(cluster: ClusterFile, binaries: PostgresBinaries, runAs: SystemUser | null, persistent: boolean): Promise<void> {
  const parent = dirname(cluster.pgdata);
  await mkdir(parent, { recursive: true });
  // Leftovers of an interrupted initialisation (its initdb may even still be running,
  // orphaned; it then fails harmlessly). We hold the start lock: nobody else initialises.
  for (const entry of readdirSync(parent)) {
    if (entry.startsWith(`${basename(cluster.pgdata)}.init-`)) {
      await rm(join(parent, entry), { recursive: true, force: true, maxRetries: 3 }).catch(() => {});
    }
  }
  const staging = await mkdtemp(`${cluster.pgdata}.init-`);
  const passwordFile = `${staging}.pw`;
  try {
    await writeFile(passwordFile, `${cluster.password}\n`, { mode: 0o600, flag: 'wx' });
    if (runAs) {
      await chown(staging, runAs.uid, runAs.gid);
      await chown(passwordFile, runAs.uid, runAs.gid);
    }
    const child = spawn(
      binaries.initdb,
      [
        `--pgdata=${staging}`,
        `--username=${USER}`,
        '--auth=scram-sha-256',
        `--pwfile=${passwordFile}`,
        '--encoding=UTF8',
        '--lc-messages=C',
        ...(persistent ? [] : ['--no-sync']),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], cwd: dirname(binaries.initdb), ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}) },
    );
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | string>((r, reject) => {
      child.once('error', reject);
      child.once('close', (c, signal) => r(c ?? String(signal)));
    });
    if (code !== 0) {
      const reason = output.split('\n').filter((l) => /error|fatal|invalid|could not/i.test(l)).slice(-3).join(' ').trim();
      throw new EmbeddedStartError(`initdb could not create a cluster in ${cluster.pgdata}: ${reason || `it exited with ${code}`}. ${ADVICE}`);
    }
    // An empty folder (or one without PG_VERSION, i.e. no cluster) is replaced.
    if (existsSync(cluster.pgdata) && !existsSync(join(cluster.pgdata, 'PG_VERSION'))) {
      await rm(cluster.pgdata, { recursive: true, force: true });
    }
    await chmod(staging, 0o700);
    await rename(staging, cluster.pgdata);
  } finally {
    await rm(passwordFile, { force: true });
    await rm(staging, { recursive: true, force: true });
  }
}

function basename(path: string): string {
  return path.slice(dirname(path).length + 1);
}

async function loadOrCreateClusterFile(dataDir: string, runAs: SystemUser | null): Promise<ClusterFile> {
  const path = join(dataDir, 'cluster.json');
  const text = await readFile(path, 'utf8').catch(() => null);
  if (text !== null) {
    try {
      return JSON.parse(text) as ClusterFile;
    } catch {
      throw new EmbeddedStartError(`${path} is damaged; restore it, or remove the data folder ${dataDir} to start with an empty database`);
    }
  }
  const cluster: ClusterFile = { pgdata: clusterFolder(dataDir, runAs), password: randomBytes(18).toString('base64url') };
  await writeFileAtomic(path, JSON.stringify(cluster, null, 2), 0o600);
  return cluster;
}

/**
 * The cluster lives inside the data folder, unless we are root and the `postgres`
 * user cannot reach it (a folder under /root, mode 700). Then it lives under
 * /var/tmp (kept across reboots), named after the data folder, and cluster.json
 * records where. A folder of that name left by an earlier data folder of the same
 * path (since deleted, with the password) is not reused: we pick another name.
 */
function clusterFolder(dataDir: string, runAs: SystemUser | null): string {
  if (userCanReach(runAs, dataDir, 'x')) return join(dataDir, 'pg');
  const digest = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  const preferred = join('/var/tmp', `tally-pg-${digest}`);
  return existsSync(preferred) ? `${preferred}-${randomBytes(4).toString('hex')}` : preferred;
}

/**
 * The postmaster named by postmaster.pid, if it is alive and really runs on this
 * cluster (its working directory is the cluster: not a reuse of its pid after a reboot).
 */
function livePostmaster(pgdata: string): Postmaster | null {
  const lines = readPidFile(pgdata);
  if (!lines) return null;
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!processAlive(pid)) return null;
  // Without /proc (not Linux) we cannot tell a reused pid apart: take it for the server.
  if (existsSync('/proc/self') && !sameFolder(processCwd(pid), pgdata)) return null;
  return Number.isInteger(port) && port > 0 ? { pid, port, started: processStartTime(pid) } : null;
}

function readPidFile(pgdata: string): string[] | null {
  try {
    return readFileSync(join(pgdata, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return null;
  }
}

function sameFolder(a: string | null, b: string): boolean {
  if (a === null) return false;
  if (a === b) return true;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/**
 * After a crash postmaster.pid may name a process that no longer exists, one that
 * exited but was not reaped yet, or (after a reboot) a pid now used by something else.
 * PostgreSQL refuses to start in the last two cases, so we remove the file — once no
 * process of the dead server (orphaned backends, which exit within moments of their
 * postmaster) still uses the cluster, because the file is what protects it from two
 * servers at once.
 */
async function clearStalePidFile(pgdata: string, log: (message: string) => void): Promise<void> {
  const lines = readPidFile(pgdata);
  if (!lines) return;
  const real = await realpath(pgdata);
  const users = () => processesIn(real);
  await until(15_000, async () => users().length === 0);
  const left = users();
  if (left.length > 0) {
    throw new EmbeddedStartError(
      `processes ${left.join(', ')} of an earlier PostgreSQL still use ${pgdata}; stop them (kill ${left.join(' ')}) and retry`,
    );
  }
  log(`removing the stale ${join(pgdata, 'postmaster.pid')} (process ${lines[0]} is not running)`);
  await rm(join(pgdata, 'postmaster.pid'), { force: true });
}

/** Live processes whose working directory is that folder (a PostgreSQL's processes run in their cluster). */
function processesIn(folder: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return []; // no /proc: PostgreSQL itself will judge the pid file
  }
  return entries
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((pid) => processCwd(pid) === folder && processAlive(pid));
}

/**
 * Serialises starts (and stops) on one data folder: two commands launched together
 * start one server. The lock file holds its owner's pid and start time; it is created
 * complete (written aside, then hard-linked into place), and a lock whose owner is
 * gone is broken.
 */
async function acquireStartLock(dataDir: string, timeoutMs = 600_000): Promise<() => Promise<void>> {
  const path = join(dataDir, 'start.lock');
  const content = `${process.pid} ${processStartTime(process.pid) ?? ''}\n`;
  const mine = `${path}.${process.pid}.${randomBytes(6).toString('hex')}`;
  await writeFile(mine, content);
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      try {
        await link(mine, path);
        return async () => {
          if ((await readFile(path, 'utf8').catch(() => null)) === content) await rm(path, { force: true });
        };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'EEXIST' && !linkUnsupported(code)) throw error;
        if (linkUnsupported(code)) {
          // A file system without hard links: create the lock directly (briefly empty).
          const created = await writeFile(path, content, { flag: 'wx' }).then(() => true, () => false);
          if (created) {
            return async () => {
              if ((await readFile(path, 'utf8').catch(() => null)) === content) await rm(path, { force: true });
            };
          }
        }
      }
      const holder = await readFile(path, 'utf8').catch(() => null);
      if (holder === null) continue; // released meanwhile
      const [pid, started] = holder.trim().split(' ');
      // An empty lock is being written (see the fallback above): stale only once old.
      const writing = holder === '' && Date.now() - ((await stat(path).catch(() => null))?.mtimeMs ?? 0) < 10_000;
      if (!writing && !processAlive(Number(pid), started || null)) {
        await breakLock(path, holder);
        continue;
      }
      if (Date.now() > deadline) {
        throw new EmbeddedStartError(`process ${pid} has been starting or stopping the embedded PostgreSQL in ${dataDir} for too long; stop it (kill ${pid}) and retry`);
      }
      // The holder is another process: there is no event to await across processes.
      await delay(50);
    }
  } finally {
    await rm(mine, { force: true });
  }
}

function linkUnsupported(code: string | undefined): boolean {
  return code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS';
}

/** Moves the dead holder's lock away; if another process replaced it meanwhile, puts theirs back. */
async function breakLock(path: string, seen: string): Promise<void> {
  const grave = `${path}.stale.${process.pid}.${randomBytes(6).toString('hex')}`;
  try {
    await rename(path, grave);
  } catch {
    return; // gone already
  }
  const moved = await readFile(grave, 'utf8').catch(() => seen);
  if (moved !== seen) await link(grave, path).catch(() => {});
  await rm(grave, { force: true });
}

async function writeFileAtomic(path: string, data: string, mode = 0o644): Promise<void> {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temporary, data, { mode });
  await rename(temporary, path);
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

export async function answers(url: string): Promise<boolean> {
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
  client.on('error', () => {});
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

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls a condition (across processes there is nothing to await) until it holds or time runs out. */
async function until(timeoutMs: number, condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition()) && Date.now() < deadline) await delay(50);
}
