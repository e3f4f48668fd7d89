import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { livePostmaster } from '../../src/dev-db/postmaster-pid.js';
import { stopStrayServers } from './stray-servers.js';

/**
 * A test run keeps everything it makes on disk in one folder of its own, the run root
 * (`<temp dir>/tally-test-run-<run id>`), and removes it at the end, passing or failing.
 * The global setup points TMPDIR at it, so every temp folder of every test file, every
 * `tally` child and every embedded cluster a test starts lands inside; and TALLY_DATA_DIR,
 * so no test reads or writes the developer's ./.tally. One thing lives elsewhere: as
 * root, a cluster whose data folder the `postgres` user cannot enter (mkdtemp makes them
 * 0700) is kept in /var/tmp/tally-pg-<hash> (src/dev-db/cluster.ts), named by the data
 * folder's cluster.json; those are removed through the cluster.json files left in the
 * root, and tests that remove a data folder themselves use removeDataDir.
 *
 * A run that is killed (SIGKILL, a closed terminal) never reaches its teardown: the next
 * run removes its root, after stopping what it left running. A root is stale when the
 * process that made it is gone — its pid, and its start time, since pids are reused.
 */
export const RUN_ROOT_PREFIX = 'tally-test-run-';
const OWNER_FILE = 'owner.json';
/** A root without its owner file is one being made, unless it is older than this. */
const UNOWNED_GRACE_MS = 10 * 60_000;
/** Only clusters in the folder src/dev-db/cluster.ts uses for unreachable data folders are removed outside a root. */
const FALLBACK_CLUSTERS = '/var/tmp/tally-pg-';

interface Owner {
  runId: string;
  pid: number;
  startTime: string | null;
}

/** A process's start time (clock ticks since boot, field 22 of /proc/<pid>/stat): with its pid, who it is. */
async function startTimeOf(pid: number): Promise<string | null> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
  return text?.slice(text.lastIndexOf(')') + 2).split(' ')[19] ?? null;
}

/** Makes this run's root under `base`, enterable by the `postgres` user (its clusters may live in it). */
export async function createRunRoot(base: string, runId: string): Promise<string> {
  const root = join(base, `${RUN_ROOT_PREFIX}${runId}`);
  await mkdir(root);
  await chmod(root, 0o755);
  const owner: Owner = { runId, pid: process.pid, startTime: await startTimeOf(process.pid) };
  await writeFile(join(root, OWNER_FILE), JSON.stringify(owner));
  return root;
}

/** Removes a root: first the clusters its data folders name elsewhere, then the folder. */
export async function removeRunRoot(root: string): Promise<void> {
  for (const dataDir of await dataDirsUnder(root)) await removeClusterOf(dataDir);
  await rm(root, { recursive: true, force: true });
}

/** Removes the roots of runs whose process is gone, with whatever they left running; returns them. */
export async function removeStaleRunRoots(base: string): Promise<string[]> {
  const removed: string[] = [];
  for (const entry of await readdir(base).catch(() => [])) {
    if (!entry.startsWith(RUN_ROOT_PREFIX)) continue;
    const root = join(base, entry);
    const owner = await readFile(join(root, OWNER_FILE), 'utf8').then((text) => JSON.parse(text) as Owner, () => null);
    if (owner) {
      if (owner.startTime !== null && (await startTimeOf(owner.pid)) === owner.startTime) continue; // a run in progress
      await stopStrayServers(owner.runId);
    } else {
      const made = (await stat(root).catch(() => null))?.mtimeMs ?? Infinity;
      if (made > Date.now() - UNOWNED_GRACE_MS) continue;
    }
    await removeRunRoot(root);
    removed.push(root);
  }
  return removed;
}

/** A data folder and the cluster its cluster.json names, stopping a server still running on it. */
export async function removeDataDir(dataDir: string): Promise<void> {
  await removeClusterOf(dataDir);
  await rm(dataDir, { recursive: true, force: true });
}

async function removeClusterOf(dataDir: string): Promise<void> {
  const text = await readFile(join(dataDir, 'cluster.json'), 'utf8').catch(() => null);
  const pgdata = text === null ? null : (JSON.parse(text) as { pgdata?: string }).pgdata;
  if (!pgdata) return;
  await stopPostmaster(pgdata);
  // One inside the data folder goes with it; elsewhere, only the fallback folder's are ours to delete:
  // the cluster, and what an initdb killed midway left beside it (<pgdata>.init-XXXXXX and its .pw).
  if (!pgdata.startsWith(FALLBACK_CLUSTERS)) return;
  const siblings = await readdir(dirname(pgdata)).catch(() => []);
  const staging = siblings.filter((name) => name.startsWith(`${basename(pgdata)}.init-`)).map((name) => join(dirname(pgdata), name));
  for (const path of [pgdata, ...staging]) await rm(path, { recursive: true, force: true });
}

/** An immediate shutdown (SIGQUIT), then SIGKILL if it is still there after a few seconds: its data is being deleted. */
async function stopPostmaster(pgdata: string): Promise<void> {
  const postmaster = livePostmaster(pgdata);
  if (!postmaster) return;
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(postmaster.pid, name);
    } catch {
      // already gone
    }
  };
  signal('SIGQUIT');
  // Its exit is in another process tree: polled, bounded.
  for (const deadline = Date.now() + 5_000; livePostmaster(pgdata) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
  if (livePostmaster(pgdata)) signal('SIGKILL');
}

/** Every folder under `root` holding a cluster.json (a Tally data folder), not descending into clusters. */
async function dataDirsUnder(root: string, depth = 6): Promise<string[]> {
  if (depth === 0 || existsSync(join(root, 'PG_VERSION'))) return [];
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  const found = entries.some((e) => e.isFile() && e.name === 'cluster.json') ? [root] : [];
  for (const entry of entries) if (entry.isDirectory()) found.push(...(await dataDirsUnder(join(root, entry.name), depth - 1)));
  return found;
}
