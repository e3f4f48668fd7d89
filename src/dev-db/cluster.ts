import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chown, link, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { PostgresBinaries } from './binaries.js';
import { run, userCanReach, type SystemUser } from './system-user.js';

/** Where the cluster is and its superuser's password: `cluster.json` in the data folder. */
export interface Cluster {
  pgdata: string;
  password: string;
}

/** A cluster and what running it takes: its data folder, the programs, the user they run as, where to log. */
export type Setup = { dataDir: string; cluster: Cluster; binaries: PostgresBinaries; runAs: SystemUser | null; log(line: string): void };

/** A failure an operator can act on; the message says what to do. */
export class EmbeddedStartError extends Error {}

export const ADVICE = 'Set TALLY_DATA_DIR to a folder you can write, or DATABASE_URL to use your own PostgreSQL.';

export const urlOf = (cluster: Cluster, port: number, database = 'tally') =>
  `postgres://postgres:${encodeURIComponent(cluster.password)}@localhost:${port}/${database}`;

export async function readCluster(dataDir: string): Promise<Cluster | null> {
  const path = join(dataDir, 'cluster.json');
  const text = await readFile(path, 'utf8').catch(() => null);
  try {
    return text === null ? null : (JSON.parse(text) as Cluster);
  } catch {
    throw new EmbeddedStartError(`${path} is damaged; restore it, or remove the data folder ${dataDir} to start with an empty database`);
  }
}

/**
 * cluster.json, created once: written aside and hard-linked into place, which fails if another command created it first
 * (then theirs is used). The cluster is under /var/tmp when the `postgres` user cannot enter the data folder, never in
 * a folder left there by a deleted data folder (its password went with it).
 */
export async function loadOrCreateCluster(dataDir: string, runAs: SystemUser | null): Promise<Cluster> {
  const existing = await readCluster(dataDir);
  if (existing) return existing;
  let pgdata = join('/var/tmp', `tally-pg-${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}`);
  if (userCanReach(runAs, dataDir, 'x')) pgdata = join(dataDir, 'pg');
  else if (existsSync(pgdata)) pgdata = `${pgdata}-${randomBytes(4).toString('hex')}`;
  const [path, aside] = [join(dataDir, 'cluster.json'), join(dataDir, `cluster.json.${process.pid}.${randomBytes(4).toString('hex')}`)];
  await writeFile(aside, JSON.stringify({ pgdata, password: randomBytes(18).toString('base64url') }, null, 2), { mode: 0o600 });
  await link(aside, path).catch((error: NodeJS.ErrnoException) => error.code === 'EEXIST' || Promise.reject(error));
  await rm(aside, { force: true });
  return (await readCluster(dataDir))!;
}

const isInitialised = (pgdata: string) => existsSync(join(pgdata, 'PG_VERSION'));

/**
 * initdb, unless done, into a fresh sibling folder renamed into place when complete: an interrupted initdb leaves
 * no half-made cluster that looks initialised. Of two commands initialising at once, the first rename wins.
 */
export async function initialise({ cluster: { pgdata, password }, binaries, runAs, log }: Setup, noSync: boolean): Promise<void> {
  if (isInitialised(pgdata)) return;
  log(`initialising a new PostgreSQL cluster in ${pgdata}`);
  await mkdir(dirname(pgdata), { recursive: true });
  // Stagings of initdbs killed midway: old ones only, since a concurrent start may be filling a new one.
  for (const entry of await readdir(dirname(pgdata))) {
    const path = join(dirname(pgdata), entry);
    const old = ((await stat(path).catch(() => null))?.mtimeMs ?? Infinity) < Date.now() - 10 * 60_000;
    if (old && entry.startsWith(`${basename(pgdata)}.init-`)) await rm(path, { recursive: true, force: true }).catch(() => {});
  }
  const staging = await mkdtemp(`${pgdata}.init-`);
  const passwordFile = `${staging}.pw`;
  try {
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600, flag: 'wx' });
    for (const path of runAs ? [staging, passwordFile] : []) await chown(path, runAs!.uid, runAs!.gid);
    const flags = ['--username=postgres', '--auth=scram-sha-256', '--encoding=UTF8', '--lc-messages=C', ...(noSync ? ['--no-sync'] : [])];
    const { code, output } = await run(binaries.initdb, [`--pgdata=${staging}`, `--pwfile=${passwordFile}`, ...flags], runAs);
    const why = output.split('\n').filter((l) => /error|fatal|invalid|could not/i.test(l));
    if (code !== 0) {
      throw new EmbeddedStartError(`initdb could not create a cluster in ${pgdata}: ${why.slice(-3).join(' ') || code}. ${ADVICE}`);
    }
    if (!isInitialised(pgdata)) await rm(pgdata, { recursive: true, force: true }); // an empty folder, or one without a cluster
    // Refused when another command's initdb finished first: its cluster is used.
    await rename(staging, pgdata).catch((error: Error) => isInitialised(pgdata) || Promise.reject(error));
  } finally {
    await rm(passwordFile, { force: true });
    await rm(staging, { recursive: true, force: true });
  }
}
