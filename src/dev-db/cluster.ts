import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, link, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { PostgresBinaries } from './binaries.js';
import { runningAs, userCanReach, type SystemUser } from './system-user.js';

/** Where the cluster is and its superuser's password: `cluster.json` in the data folder. */
export interface Cluster {
  pgdata: string;
  password: string;
}

export const DATABASE_NAME = 'tally';
export const SUPERUSER = 'postgres';

/** A failure an operator can act on; the message says what to do. */
export class EmbeddedStartError extends Error {}

export const ADVICE = 'Set TALLY_DATA_DIR to a folder you can write, or DATABASE_URL to use your own PostgreSQL.';

export function urlOf(cluster: Cluster, port: number, database = DATABASE_NAME): string {
  return `postgres://${SUPERUSER}:${encodeURIComponent(cluster.password)}@localhost:${port}/${database}`;
}

export async function readCluster(dataDir: string): Promise<Cluster | null> {
  const path = join(dataDir, 'cluster.json');
  const text = await readFile(path, 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    return JSON.parse(text) as Cluster;
  } catch {
    throw new EmbeddedStartError(`${path} is damaged; restore it, or remove the data folder ${dataDir} to start with an empty database`);
  }
}

/**
 * cluster.json, created once: written aside and hard-linked into place, which fails if
 * another command created it first — then theirs is used. No lock needed.
 */
export async function loadOrCreateCluster(dataDir: string, runAs: SystemUser | null): Promise<Cluster> {
  const existing = await readCluster(dataDir);
  if (existing) return existing;
  const path = join(dataDir, 'cluster.json');
  const cluster: Cluster = { pgdata: clusterFolder(dataDir, runAs), password: randomBytes(18).toString('base64url') };
  const aside = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(aside, JSON.stringify(cluster, null, 2), { mode: 0o600 });
  try {
    await link(aside, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await rm(aside, { force: true });
  }
  return (await readCluster(dataDir))!;
}

/**
 * Inside the data folder, unless we are root and the `postgres` user cannot enter it
 * (under /root, mode 700): then under /var/tmp (kept across reboots), named after the
 * data folder. A folder of that name left by an earlier, deleted data folder is not
 * reused (its password went with it).
 */
function clusterFolder(dataDir: string, runAs: SystemUser | null): string {
  if (userCanReach(runAs, dataDir, 'x')) return join(dataDir, 'pg');
  const preferred = join('/var/tmp', `tally-pg-${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}`);
  return existsSync(preferred) ? `${preferred}-${randomBytes(4).toString('hex')}` : preferred;
}

export const isInitialised = (cluster: Cluster) => existsSync(join(cluster.pgdata, 'PG_VERSION'));

/**
 * initdb into a fresh sibling folder, renamed into place when complete: an interrupted
 * initdb leaves no half-made cluster that looks initialised. Two commands initialising
 * at once both succeed; the first rename wins and the other's copy is discarded.
 */
export async function initialise(cluster: Cluster, binaries: PostgresBinaries, runAs: SystemUser | null, persistent: boolean): Promise<void> {
  const parent = dirname(cluster.pgdata);
  await mkdir(parent, { recursive: true });
  await removeAbandonedStagings(parent, basename(cluster.pgdata));
  const staging = await mkdtemp(`${cluster.pgdata}.init-`);
  const passwordFile = `${staging}.pw`;
  try {
    await writeFile(passwordFile, `${cluster.password}\n`, { mode: 0o600, flag: 'wx' });
    if (runAs) {
      await chown(staging, runAs.uid, runAs.gid);
      await chown(passwordFile, runAs.uid, runAs.gid);
    }
    const args = [`--pgdata=${staging}`, `--username=${SUPERUSER}`, '--auth=scram-sha-256', `--pwfile=${passwordFile}`, '--encoding=UTF8', '--lc-messages=C'];
    const { code, output } = await run(binaries.initdb, persistent ? args : [...args, '--no-sync'], runAs);
    if (code !== 0) {
      const reason = output.split('\n').filter((l) => /error|fatal|invalid|could not/i.test(l)).slice(-3).join(' ').trim();
      throw new EmbeddedStartError(`initdb could not create a cluster in ${cluster.pgdata}: ${reason || `it exited with ${code}`}. ${ADVICE}`);
    }
    // An empty folder (or one without PG_VERSION, i.e. no cluster) is replaced.
    if (existsSync(cluster.pgdata) && !isInitialised(cluster)) await rm(cluster.pgdata, { recursive: true, force: true });
    await chmod(staging, 0o700);
    await rename(staging, cluster.pgdata).catch((error: NodeJS.ErrnoException) => {
      if (!isInitialised(cluster)) throw error; // else another command's initdb finished first
    });
  } finally {
    await rm(passwordFile, { force: true });
    await rm(staging, { recursive: true, force: true });
  }
}

/** Stagings of initdbs killed midway: old ones only, since a concurrent start may be filling a new one. */
async function removeAbandonedStagings(parent: string, name: string): Promise<void> {
  const cutoff = Date.now() - 10 * 60_000;
  for (const entry of await readdir(parent)) {
    if (!entry.startsWith(`${name}.init-`)) continue;
    const path = join(parent, entry);
    if (((await stat(path).catch(() => null))?.mtimeMs ?? Infinity) < cutoff) await rm(path, { recursive: true, force: true }).catch(() => {});
  }
}

/** Runs a program to completion (as `runAs`), collecting its output. */
export function run(program: string, args: string[], runAs: SystemUser | null, stdio?: number): Promise<{ code: number | string; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      // The program's own folder: the postgres user may not be able to enter ours.
      cwd: dirname(program),
      stdio: stdio === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', stdio, stdio],
      ...runningAs(runAs),
    });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code: code ?? String(signal), output }));
  });
}
