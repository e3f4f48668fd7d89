import { once } from 'node:events';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { backoff, sleep } from '../backoff.js';
import { postgresBinaries } from './binaries.js';
import { ADVICE, EmbeddedStartError, initialise, loadOrCreateCluster, readCluster, urlOf, type Setup } from './cluster.js';
import { livePostmaster, processRuns, removeStalePidFile } from './postmaster-pid.js';
import { postgresRunAs, run } from './system-user.js';

export { EmbeddedStartError } from './cluster.js';

/**
 * One embedded PostgreSQL per data folder (TALLY_DATA_DIR), shared by every command; see docs/ARCHITECTURE.md,
 * "Embedded PostgreSQL". running.json (port and pids of the server and its owner) is for people and tools.
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
/** Another command's server has the cluster, orphans of a killed one still hold it, or another program has the port. */
const TRANSIENT = /lock file .* already exists|pre-existing shared memory block|could not bind|could not create any TCP\/IP sockets/i;

export async function startEmbedded(options: EmbeddedOptions): Promise<EmbeddedServer> {
  const dataDir = resolve(options.dataDir);
  const log = options.log ?? (() => {});
  try {
    await mkdir(dataDir, { recursive: true });
    const runAs = postgresRunAs();
    const cluster = await loadOrCreateCluster(dataDir, runAs);
    const setup = { dataDir, cluster, binaries: await postgresBinaries(runAs, log), runAs, log };
    return await claimOwnership(setup, await connectOrStart(setup, options), options.persistent ?? true);
  } catch (error) {
    if (error instanceof EmbeddedStartError) throw error;
    throw new EmbeddedStartError(`the embedded PostgreSQL could not start: ${(error as Error).message.replace(/\.?$/, '.')} ${ADVICE}`);
  }
}

/** The URL of this data folder's server if one runs and answers, starting nothing: a worker follows serve's server to a new port. */
export async function runningEmbeddedUrl(dataDir: string): Promise<string | null> {
  const cluster = await readCluster(resolve(dataDir)).catch(() => null);
  const postmaster = cluster && livePostmaster(cluster.pgdata);
  return postmaster && (await answers(urlOf(cluster, postmaster.port))) ? urlOf(cluster, postmaster.port) : null;
}

export async function answers(url: string): Promise<boolean> {
  const client = await connect(url);
  await client?.end().catch(() => {});
  return client !== null;
}

/** A session, or null: PostgreSQL accepts none while it starts or stops. */
async function connect(url: string): Promise<pg.Client | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000, application_name: 'tally embedded-postgres owner' });
  client.on('error', () => {}); // the server stopping ends the session: expected
  try {
    await client.connect();
    return client;
  } catch {
    await client.end().catch(() => {});
    return null;
  }
}

/** A session in database `postgres` on the cluster's server: one already running, or one started now. */
async function connectOrStart(setup: Setup, options: EmbeddedOptions): Promise<Session> {
  const { pgdata } = setup.cluster;
  const deadline = Date.now() + START_TIMEOUT_SECONDS * 1000;
  let startedHere = false;
  for (let attempt = 1; ; attempt++) {
    const running = livePostmaster(pgdata);
    if (running) {
      const client = await connect(urlOf(setup.cluster, running.port, 'postgres'));
      if (client) return { client, port: running.port, startedHere };
      if (Date.now() > deadline) {
        const { pid, port } = running;
        throw new EmbeddedStartError(
          `PostgreSQL (pid ${pid}) runs on ${pgdata} but does not answer on port ${port}; stop it (kill ${pid}) and retry`,
        );
      }
    } else if (await start(setup, options, Date.now() > deadline)) {
      startedHere = true;
      continue;
    }
    await sleep(backoff(attempt, RETRY)); // another process's start or stop: nothing to await across processes
  }
}

/**
 * pg_ctl start on a free port: true when the server started, false when PostgreSQL refused for a reason that
 * passes (TRANSIENT) and this is not the last try; otherwise an error with the end of what it logged.
 */
async function start({ dataDir, cluster, binaries, runAs, log }: Setup, options: EmbeddedOptions, lastTry: boolean): Promise<boolean> {
  await initialise({ dataDir, cluster, binaries, runAs, log }, options.persistent === false);
  await removeStalePidFile(cluster.pgdata, log);
  const port = await freePort();
  const logPath = join(dataDir, 'postgres.log');
  if (((await stat(logPath).catch(() => null))?.size ?? 0) > 10 * 1024 * 1024) await rename(logPath, `${logPath}.1`).catch(() => {});
  // The server writes through the descriptor we hand pg_ctl: it needs no access to the data folder.
  const logFile = await open(logPath, 'a', 0o600);
  const logStart = (await logFile.stat()).size;
  const quoted = (options.postgresFlags ?? []).map((flag) => `'${flag.replace(/'/g, `'\\''`)}'`); // pg_ctl hands them to a shell
  const settings = [`-p ${port} -c listen_addresses=localhost -c unix_socket_directories= -c max_connections=400`, ...quoted];
  const args = ['start', '-D', cluster.pgdata, '-w', '-t', String(START_TIMEOUT_SECONDS), '-o', settings.join(' ')];
  if ((await run(binaries.pgCtl, args, runAs, logFile.fd).finally(() => logFile.close())).code === 0) {
    log(`embedded PostgreSQL started on port ${port} (data ${cluster.pgdata}, log ${logPath})`);
    return true;
  }
  const refusal = (await readFile(logPath, 'utf8').catch(() => '')).slice(logStart);
  if (TRANSIENT.test(refusal) && !lastTry) return false;
  const noise = /^(LOG|HINT|DETAIL):|^stopped waiting|^pg_ctl: could not start|^Examine the log|database system is shut down|^$/;
  const prefix = /^(waiting for server to start\.*)?(\d{4}-[\d-]+ [\d:.]+ \S+ \[\d+\] )?/; // and a timestamp
  const lines = refusal.split('\n').map((l) => l.replace(prefix, '').trim());
  const why = lines.filter((l) => !noise.test(l)).slice(-3);
  throw new EmbeddedStartError(`the embedded PostgreSQL did not start: ${why.join(' ') || 'pg_ctl start failed'}. Its log is ${logPath}.`);
}

type Session = { client: pg.Client; port: number; startedHere: boolean };

async function claimOwnership(setup: Setup, { client, port, startedHere }: Session, persistent: boolean): Promise<EmbeddedServer> {
  const { dataDir, cluster, log } = setup;
  const url = urlOf(cluster, port);
  // Unless a concurrent start created it meanwhile: 42P04 duplicate_database (23505 from the catalog's unique index).
  const created = (error: { code?: string }) => ['42P04', '23505'].includes(error.code!) || Promise.reject(error);
  if ((await client.query(`select from pg_database where datname = 'tally'`)).rowCount === 0)
    await client.query('create database tally').catch(created);
  const { rows } = await client.query<{ owner: boolean }>('select pg_try_advisory_lock($1::bigint) as owner', [OWNER_LOCK]);
  if (!rows[0]!.owner) {
    await client.end();
    log(`using the embedded PostgreSQL already running on port ${port}`);
    return { url, owner: false, stop: async () => {} };
  }
  if (!startedHere) log(`taking over the embedded PostgreSQL on port ${port} (the command that owned it is gone)`);
  const runningPath = join(dataDir, 'running.json');
  const record = JSON.stringify({ port, ownerPid: process.pid, postmasterPid: livePostmaster(cluster.pgdata)?.pid });
  await writeFile(`${runningPath}.${process.pid}.tmp`, record);
  await rename(`${runningPath}.${process.pid}.tmp`, runningPath);
  // Only our record: a later owner may have replaced it.
  const forget = () => existsSync(runningPath) && readFileSync(runningPath, 'utf8') === record && rmSync(runningPath);
  // Exiting without stop() (an uncaught error, process.exit): the server still gets a fast shutdown, signalled synchronously.
  const stopOnExit = () => {
    forget();
    const postmaster = livePostmaster(cluster.pgdata);
    if (postmaster) process.kill(postmaster.pid, 'SIGINT');
  };
  process.once('exit', stopOnExit);
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      process.removeListener('exit', stopOnExit);
      forget();
      await stopServer(setup); // locked meanwhile: a command starting now starts a new server, rather than take one shutting down
      await client.end().catch(() => {});
      if (!persistent) await rm(cluster.pgdata, { recursive: true, force: true });
    })());
  return { url, owner: true, stop };
}

/** Fast shutdown; immediate if that takes over 30 s. Returns once the postmaster has exited. */
async function stopServer({ cluster, binaries, runAs }: Setup): Promise<void> {
  for (const mode of ['fast', 'immediate']) {
    const postmaster = livePostmaster(cluster.pgdata);
    if (!postmaster) return;
    await run(binaries.pgCtl, ['stop', '-D', cluster.pgdata, '-m', mode, '-w', '-t', mode === 'fast' ? '30' : '10'], runAs);
    // pg_ctl returns when postmaster.pid is gone, an instant before the process exits.
    for (const deadline = Date.now() + 5_000; processRuns(postmaster.pid) && Date.now() < deadline;) await sleep(10);
  }
}

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((closed) => probe.close(closed));
  return port;
}
