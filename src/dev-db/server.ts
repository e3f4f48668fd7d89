import { readFileSync, rmSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { backoff, sleep } from '../backoff.js';
import { postgresBinaries, type PostgresBinaries } from './binaries.js';
import { ADVICE, DATABASE_NAME, EmbeddedStartError, initialise, isInitialised, loadOrCreateCluster, readCluster, run, urlOf, type Cluster } from './cluster.js';
import { livePostmaster, processRuns, removeStalePidFile } from './postmaster-pid.js';
import { postgresRunAs, type SystemUser } from './system-user.js';

export { EmbeddedStartError } from './cluster.js';

/**
 * One embedded PostgreSQL per data folder (TALLY_DATA_DIR), shared by every command.
 * Two things are decided, each by PostgreSQL itself rather than by lock files of ours:
 *
 * - *Which server runs.* `pg_ctl start` on the cluster; PostgreSQL's postmaster.pid lets
 *   one server run on it, so of two commands starting at once one server starts and
 *   the other command finds it. postmaster.pid also says where it listens.
 * - *Who stops it.* The owner is the command holding a session advisory lock on that
 *   server. A SIGKILLed owner's connection closes at once, releasing the lock, and the
 *   next command takes the lock and with it the duty to stop the server. (A lock file —
 *   proper-lockfile's, say — would have to guess from its age whether its holder died.)
 *
 * The server runs in a session of its own (pg_ctl detaches it), so a terminal's Ctrl-C
 * reaches only the command, which then stops the server in order.
 *
 * Files in the data folder: cluster.json (where the cluster is, its password),
 * running.json (port and pids of the server and its owner, for people and tools; nothing
 * here reads it), postgres.log (the server's log).
 */

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

/** The session advisory lock that makes its holder the owner (in database `postgres`). */
const OWNER_LOCK = 7_240_100_001;
/** Crash recovery after a kill can take a while. */
const START_TIMEOUT_SECONDS = 300;
const RETRY = { firstMs: 50, capMs: 1_000, floorMs: 25 } as const;

export async function startEmbedded(options: EmbeddedOptions): Promise<EmbeddedServer> {
  const dataDir = resolve(options.dataDir);
  const log = options.log ?? (() => {});
  try {
    await mkdir(dataDir, { recursive: true });
  } catch (error) {
    throw new EmbeddedStartError(`cannot create the data folder ${dataDir} (${(error as Error).message}). ${ADVICE}`);
  }
  try {
    const runAs = postgresRunAs();
    const cluster = await loadOrCreateCluster(dataDir, runAs);
    const binaries = await postgresBinaries(runAs, log);
    const { port, startedHere } = await ensureRunning(dataDir, cluster, binaries, runAs, options, log);
    await ensureDatabase(urlOf(cluster, port, 'postgres'));
    return await claimOwnership(dataDir, cluster, port, startedHere, { binaries, runAs, persistent: options.persistent ?? true, log });
  } catch (error) {
    if (error instanceof EmbeddedStartError) throw error;
    const reason = `${(error as Error).message ?? String(error)}`.replace(/\.?$/, '.');
    throw new EmbeddedStartError(`the embedded PostgreSQL could not start: ${reason} ${ADVICE}`);
  }
}

/**
 * The URL of the embedded server running on this data folder's cluster now, if it
 * answers; null otherwise. Starts and claims nothing: a worker beside `serve` uses it to
 * follow the server when serve restarts it on a new port.
 */
export async function runningEmbeddedUrl(dataDir: string): Promise<string | null> {
  const cluster = await readCluster(resolve(dataDir)).catch(() => null);
  const postmaster = cluster && livePostmaster(cluster.pgdata);
  if (!cluster || !postmaster) return null;
  const url = urlOf(cluster, postmaster.port);
  return (await answers(url)) ? url : null;
}

/** The port of a server on the cluster: one already running, or one started now. */
async function ensureRunning(
  dataDir: string,
  cluster: Cluster,
  binaries: PostgresBinaries,
  runAs: SystemUser | null,
  options: EmbeddedOptions,
  log: (message: string) => void,
): Promise<{ port: number; startedHere: boolean }> {
  const deadline = Date.now() + START_TIMEOUT_SECONDS * 1000;
  for (let attempt = 1; ; attempt++) {
    const running = livePostmaster(cluster.pgdata);
    if (running) {
      if (await answers(urlOf(cluster, running.port, 'postgres'))) return { port: running.port, startedHere: false };
      // Starting up (another command's start, crash recovery) or shutting down.
      if (Date.now() > deadline) {
        throw new EmbeddedStartError(
          `a PostgreSQL server (pid ${running.pid}) runs on ${cluster.pgdata} but does not answer on port ${running.port}; stop it (kill ${running.pid}) and retry`,
        );
      }
    } else {
      if (!isInitialised(cluster)) {
        log(`initialising a new PostgreSQL cluster in ${cluster.pgdata}`);
        await initialise(cluster, binaries, runAs, options.persistent ?? true);
      }
      await removeStalePidFile(cluster.pgdata, log);
      const port = await freePort();
      const refusal = await pgCtlStart(dataDir, cluster, binaries, runAs, port, options.postgresFlags ?? []);
      if (refusal === null) {
        log(`embedded PostgreSQL started on port ${port} (data ${cluster.pgdata}, log ${join(dataDir, 'postgres.log')})`);
        return { port, startedHere: true };
      }
      // PostgreSQL's exclusivity: another command's server won the cluster, orphaned
      // backends of a killed one still hold it, or another program took the port.
      const transient = /lock file .* already exists|pre-existing shared memory block|could not bind|could not create any TCP\/IP sockets|Address already in use/i;
      if (!transient.test(refusal) || Date.now() > deadline) {
        throw new EmbeddedStartError(`the embedded PostgreSQL (data ${cluster.pgdata}) did not start: ${lastLines(refusal)}. Its log is ${join(dataDir, 'postgres.log')}.`);
      }
    }
    await sleep(backoff(attempt, RETRY)); // another process's start or stop: nothing to await across processes
  }
}

/** null when the server started; otherwise what the server and pg_ctl logged. */
async function pgCtlStart(
  dataDir: string,
  cluster: Cluster,
  binaries: PostgresBinaries,
  runAs: SystemUser | null,
  port: number,
  flags: string[],
): Promise<string | null> {
  const settings = ['-p', String(port), '-c', 'listen_addresses=localhost', '-c', 'unix_socket_directories=', '-c', 'max_connections=400', ...flags];
  const logPath = join(dataDir, 'postgres.log');
  // The server writes through the descriptor we hand pg_ctl: it needs no access to the data folder.
  const logFile = await openLog(logPath);
  const logStart = (await logFile.stat()).size;
  try {
    const args = ['start', '-D', cluster.pgdata, '-w', '-t', String(START_TIMEOUT_SECONDS), '-o', settings.map(shellQuote).join(' ')];
    const { code } = await run(binaries.pgCtl, args, runAs, logFile.fd);
    if (code === 0) return null;
  } finally {
    await logFile.close();
  }
  return (await readFile(logPath, 'utf8').catch(() => '')).slice(logStart) || 'pg_ctl start failed';
}

/** pg_ctl hands the server's options to a shell. */
const shellQuote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

async function claimOwnership(
  dataDir: string,
  cluster: Cluster,
  port: number,
  startedHere: boolean,
  how: { binaries: PostgresBinaries; runAs: SystemUser | null; persistent: boolean; log: (message: string) => void },
): Promise<EmbeddedServer> {
  const url = urlOf(cluster, port);
  const lock = new pg.Client({ connectionString: urlOf(cluster, port, 'postgres'), application_name: 'tally embedded-postgres owner' });
  lock.on('error', () => {}); // the server stopping ends this session: expected
  await lock.connect();
  const { rows } = await lock.query<{ owner: boolean }>('select pg_try_advisory_lock($1::bigint) as owner', [OWNER_LOCK]);
  if (!rows[0]!.owner) {
    await lock.end();
    how.log(`using the embedded PostgreSQL already running on port ${port}`);
    return { url, owner: false, stop: async () => {} };
  }
  const runningPath = join(dataDir, 'running.json');
  if (!startedHere) {
    const previous = await readFile(runningPath, 'utf8').then((t) => JSON.parse(t) as { ownerPid?: number }, () => null);
    how.log(`taking over the embedded PostgreSQL on port ${port} (${previous?.ownerPid ? `its owner, process ${previous.ownerPid}, is gone` : 'no command owned it'})`);
  }
  const record = JSON.stringify({ port, ownerPid: process.pid, postmasterPid: livePostmaster(cluster.pgdata)?.pid });
  await writeFile(`${runningPath}.${process.pid}.tmp`, record);
  await rename(`${runningPath}.${process.pid}.tmp`, runningPath);
  const forget = () => {
    // Only our record: a later owner may have replaced it.
    try {
      if (readFileSync(runningPath, 'utf8') === record) rmSync(runningPath, { force: true });
    } catch {
      // already gone
    }
  };
  // Exiting without stop() (an uncaught error, process.exit): still stop the server —
  // signalled now, synchronously (fast shutdown); it finishes on its own.
  const stopOnExit = () => {
    forget();
    const postmaster = livePostmaster(cluster.pgdata);
    try {
      if (postmaster) process.kill(postmaster.pid, 'SIGINT');
    } catch {
      // exited meanwhile
    }
  };
  process.once('exit', stopOnExit);
  let stopped = false;
  return {
    url,
    owner: true,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', stopOnExit);
      forget();
      // The lock is held until the server is down: a command starting meanwhile waits and
      // starts a new server rather than claiming one that is shutting down.
      await stopServer(cluster, how.binaries, how.runAs);
      await lock.end().catch(() => {});
      if (!how.persistent) await rm(cluster.pgdata, { recursive: true, force: true });
    },
  };
}

/** Fast shutdown; immediate if that takes over 30 s. Returns once the postmaster has exited. */
async function stopServer(cluster: Cluster, binaries: PostgresBinaries, runAs: SystemUser | null): Promise<void> {
  for (const [mode, seconds] of [['fast', 30], ['immediate', 10]] as const) {
    const postmaster = livePostmaster(cluster.pgdata);
    if (!postmaster) return;
    await run(binaries.pgCtl, ['stop', '-D', cluster.pgdata, '-m', mode, '-w', '-t', String(seconds)], runAs);
    // pg_ctl returns when postmaster.pid is gone, an instant before the process exits.
    const deadline = Date.now() + 5_000;
    while (processRuns(postmaster.pid) && Date.now() < deadline) await sleep(10);
  }
}

async function openLog(path: string) {
  // Keep one previous log.
  if (((await stat(path).catch(() => null))?.size ?? 0) > 10 * 1024 * 1024) await rename(path, `${path}.1`).catch(() => {});
  return await open(path, 'a', 0o600);
}

/** The end of the server's output, without timestamps: why it did not start. */
function lastLines(text: string): string {
  return text
    .split('\n')
    .map((l) => l.replace(/^\d{4}-\d\d-\d\d [\d:.]+ \S+ \[\d+\] /, '').trim())
    .filter((l) => l !== '' && !/^(LOG|HINT|DETAIL):|^waiting for server|^stopped waiting|database system is shut down/.test(l))
    .slice(-3)
    .join(' ');
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

async function ensureDatabase(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  client.on('error', () => {});
  await client.connect();
  try {
    const exists = await client.query('select 1 from pg_database where datname = $1', [DATABASE_NAME]);
    if (exists.rowCount === 0) {
      await client.query(`create database ${DATABASE_NAME}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04' && error.code !== '23505') throw error; // created by a concurrent start
      });
    }
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
