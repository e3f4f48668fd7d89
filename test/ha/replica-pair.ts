import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { appendFile, chmod, chown, mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { postgresBinaries, type PostgresBinaries } from '../../src/dev-db/binaries.js';
import { processRuns } from '../../src/dev-db/postmaster-pid.js';
import { postgresRunAs, run, type SystemUser } from '../../src/dev-db/system-user.js';
import { freePort, runTally, waitUntil } from '../support/server.js';
import { StallableProxy } from './stallable-proxy.js';

/**
 * A PostgreSQL primary and its streaming standby, from the embedded binaries (initdb,
 * pg_ctl, postgres), for failover tests. Everything lives under one folder of the OS temp
 * dir; as root the servers run as the `postgres` user (src/dev-db/system-user.ts).
 *
 * The base cluster is made once per test file (`makeBase`: initdb with wal_level=replica
 * and a replication role, started, `tally migrate`, stopped cleanly); each pair copies it
 * twice — the cleanly stopped primary's folder is a valid base for its standby, which
 * gets `standby.signal` and `primary_conninfo`. Replication goes through a proxy the
 * test can stall, so that the standby lags behind on demand (what asynchronous commit
 * can then lose is the point of the second test case).
 *
 * Trust authentication on 127.0.0.1 only, fsync off: the servers are killed as
 * processes, never as machines, so the OS page cache keeps what they wrote.
 */

export const STANDBY_NAME = 'tally_standby';
const REPLICATION_ROLE = 'replicator';

export interface Base {
  root: string;
  pgdata: string;
  binaries: PostgresBinaries & { postgres: string };
  runAs: SystemUser | null;
}

export interface Node {
  name: string;
  pgdata: string;
  port: number;
  log: string;
  /** postgres://postgres@127.0.0.1:port/tally */
  url: string;
}

export type SynchronousCommit = 'on' | 'local';

const nodeUrl = (port: number, database = 'tally') => `postgres://postgres@127.0.0.1:${port}/${database}`;

/** A migrated, cleanly stopped cluster to copy primaries and standbys from. */
export async function makeBase(): Promise<Base> {
  const runAs = postgresRunAs();
  const root = await mkdtemp(join(tmpdir(), 'tally-ha-'));
  // mkdtemp makes it 0700; the postgres user must enter it.
  await chmod(root, 0o755);
  const found = await postgresBinaries(runAs, () => {});
  const binaries = { ...found, postgres: join(found.initdb, '..', 'postgres') };
  const pgdata = join(root, 'base');
  await makeFolder(pgdata, runAs);
  const init = await run(
    binaries.initdb,
    [`--pgdata=${pgdata}`, '--username=postgres', '--auth=trust', '--encoding=UTF8', '--lc-messages=C', '--no-sync'],
    runAs,
  );
  if (init.code !== 0) throw new Error(`initdb failed: ${init.output}`);
  // initdb's pg_hba.conf already lets 127.0.0.1 connect for replication (trust, as asked).
  await appendFile(
    join(pgdata, 'postgresql.conf'),
    [
      '',
      "listen_addresses = '127.0.0.1'",
      "unix_socket_directories = ''",
      'wal_level = replica',
      'max_wal_senders = 5',
      'max_replication_slots = 5',
      'hot_standby = on',
      'wal_keep_size = 256MB',
      'max_connections = 200',
      'fsync = off',
      'full_page_writes = off',
      // A standby answers "not yet" quickly: the default retry after a failed stream is 5 s.
      "wal_retrieve_retry_interval = '200ms'",
      '',
    ].join('\n'),
  );
  const base: Base = { root, pgdata, binaries, runAs };
  const node: Node = { name: 'base', pgdata, port: await freePort(), log: join(root, 'base.log'), url: '' };
  node.url = nodeUrl(node.port);
  await start(base, node);
  await query(nodeUrl(node.port, 'postgres'), [`create role ${REPLICATION_ROLE} with replication login`, 'create database tally']);
  const migrated = runTally(['migrate'], { DATABASE_URL: node.url });
  const code = await migrated.exited;
  if (code !== 0) throw new Error(`tally migrate exited with ${code}: ${migrated.output()}`);
  await stop(base, node);
  return base;
}

/** Stops every pair still running (a test that timed out) and removes the base's folder. */
export async function removeBase(base: Base): Promise<void> {
  for (const pair of [...livePairs]) await pair.stop();
  await rm(base.root, { recursive: true, force: true });
}

const livePairs = new Set<ReplicaPair>();

// pg_ctl detaches the servers: should this process end without removeBase (killed
// worker, uncaught error), ask theirs to shut down fast, synchronously, as it exits.
process.once('exit', () => {
  for (const pair of livePairs) {
    for (const node of [pair.primary, pair.standby]) {
      try {
        process.kill(Number(readFileSync(join(node.pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGINT');
      } catch {
        // not running
      }
    }
  }
});

/** One primary and one standby streaming from it (through `proxy`), copied from the base. */
export class ReplicaPair {
  private killedPids: number[] = [];

  private constructor(
    readonly base: Base,
    readonly primary: Node,
    readonly standby: Node,
    readonly replication: StallableProxy,
  ) {}

  /**
   * Starts both and resolves once the standby streams; with synchronous_commit = on, once
   * it is the synchronous standby (pg_stat_replication.sync_state = 'sync').
   */
  static async start(base: Base, label: string, synchronousCommit: SynchronousCommit): Promise<ReplicaPair> {
    const folder = join(base.root, label);
    await makeFolder(folder, base.runAs);
    const primary = await copyNode(base, folder, 'primary');
    const standby = await copyNode(base, folder, 'standby');
    const replication = await StallableProxy.start(primary.port);
    await appendFile(
      join(primary.pgdata, 'postgresql.conf'),
      `\nport = ${primary.port}\nsynchronous_standby_names = '${STANDBY_NAME}'\nsynchronous_commit = ${synchronousCommit}\n`,
    );
    await appendFile(
      join(standby.pgdata, 'postgresql.conf'),
      `\nport = ${standby.port}\nprimary_conninfo = 'host=127.0.0.1 port=${replication.port} user=${REPLICATION_ROLE} application_name=${STANDBY_NAME}'\n`,
    );
    await writeFile(join(standby.pgdata, 'standby.signal'), '');
    const pair = new ReplicaPair(base, primary, standby, replication);
    livePairs.add(pair);
    await start(base, primary);
    await start(base, standby);
    await waitUntil(async () => {
      const state = await pair.replicationState().catch(() => null);
      return state?.state === 'streaming' && (synchronousCommit === 'local' || state.sync_state === 'sync');
    }, 30_000);
    return pair;
  }

  /** The multi-host DATABASE_URL Tally gets: both, the primary first. */
  get databaseUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.primary.port},127.0.0.1:${this.standby.port}/tally?target_session_attrs=read-write`;
  }

  /** The standby as the primary sees it. */
  async replicationState(): Promise<{ state: string; sync_state: string } | null> {
    const rows = await query(this.primary.url, [
      `select state, sync_state from pg_stat_replication where application_name = '${STANDBY_NAME}'`,
    ]);
    return (rows[0] as { state: string; sync_state: string } | undefined) ?? null;
  }

  /**
   * SIGKILL the primary's postmaster, then wait until its backends and WAL sender have
   * noticed and exited too (as they do on postmaster death): afterwards nothing of the old
   * primary can commit or answer. Returns when it died.
   */
  async killPrimary(): Promise<Date> {
    const postmaster = Number(readFileSync(join(this.primary.pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const children = childrenOf(postmaster);
    process.kill(postmaster, 'SIGKILL');
    const killedAt = new Date();
    this.killedPids = [postmaster, ...children];
    await waitUntil(() => this.killedPids.every((pid) => !processRuns(pid)), 30_000, 10);
    return killedAt;
  }

  /** `pg_ctl promote -w`: returns once the standby accepts writes. */
  async promoteStandby(): Promise<void> {
    const { code, output } = await run(this.base.binaries.pgCtl, ['promote', '-D', this.standby.pgdata, '-w', '-t', '60'], this.base.runAs);
    if (code !== 0) throw new Error(`pg_ctl promote failed: ${output}`);
  }

  async stop(): Promise<void> {
    livePairs.delete(this);
    this.replication.close();
    for (const node of [this.standby, this.primary]) await stop(this.base, node).catch(() => {});
    for (const pid of this.killedPids) if (processRuns(pid)) process.kill(pid, 'SIGKILL');
  }
}

async function copyNode(base: Base, folder: string, name: string): Promise<Node> {
  const pgdata = join(folder, name);
  // cp -a keeps the owner (postgres) and modes PostgreSQL insists on (0700).
  const copy = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('cp', ['-a', base.pgdata, pgdata], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (copy !== 0) throw new Error(`cp -a ${base.pgdata} ${pgdata} failed`);
  const port = await freePort();
  return { name, pgdata, port, log: join(folder, `${name}.log`), url: nodeUrl(port) };
}

async function makeFolder(path: string, runAs: SystemUser | null): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  if (runAs) await chown(path, runAs.uid, runAs.gid);
}

/** pg_ctl start -w; the server's output goes to node.log through a descriptor we hand it. */
async function start(base: Base, node: Node): Promise<void> {
  const log = await open(node.log, 'a', 0o644);
  try {
    const args = ['start', '-D', node.pgdata, '-w', '-t', '60', '-o', `-p ${node.port}`];
    const { code } = await run(base.binaries.pgCtl, args, base.runAs, log.fd);
    if (code !== 0) throw new Error(`pg_ctl start of ${node.name} failed: ${readFileSync(node.log, 'utf8').slice(-2000)}`);
  } finally {
    await log.close();
  }
}

async function stop(base: Base, node: Node): Promise<void> {
  const { code, output } = await run(base.binaries.pgCtl, ['stop', '-D', node.pgdata, '-m', 'fast', '-w', '-t', '30'], base.runAs);
  if (code !== 0 && !/not running|No such file|does not exist/i.test(output)) throw new Error(`pg_ctl stop of ${node.name}: ${output}`);
}

async function query(url: string, statements: string[]): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => {});
  await client.connect();
  try {
    let rows: unknown[] = [];
    for (const statement of statements) rows = (await client.query(statement)).rows;
    return rows;
  } finally {
    await client.end().catch(() => {});
  }
}

/** The pids whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return children;
}
