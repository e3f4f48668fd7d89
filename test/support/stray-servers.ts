import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A test run stops every server it started, passing or failing. Tests start embedded
 * PostgreSQL servers through `tally serve` children (pg_ctl detaches them into sessions of
 * their own); a child SIGKILLed on purpose, or a test that fails before it stops its
 * child, leaves such a server running with nobody to stop it.
 *
 * The run marks its processes: the global setup puts RUN_MARK in the environment, which
 * every worker, every `tally` child and every postgres they start inherits. At the end of
 * the run, whatever still carries the mark is stopped: postmasters first with SIGQUIT
 * (PostgreSQL's immediate shutdown), then anything left with SIGKILL, and the clusters of
 * those postmasters are deleted (they live under the OS temp dir or /var/tmp).
 */
export const RUN_MARK = 'TALLY_TEST_RUN';

interface MarkedProcess {
  pid: number;
  command: string[];
}

async function markedProcesses(runId: string): Promise<MarkedProcess[]> {
  const marked: MarkedProcess[] = [];
  const needle = `\0${RUN_MARK}=${runId}\0`;
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const environ = `\0${await readFile(`/proc/${pid}/environ`, 'latin1')}`;
      if (!environ.includes(needle)) continue;
      const command = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter(Boolean);
      marked.push({ pid, command });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return marked;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Stops what the run left running; returns the pids it found, for the log. */
export async function stopStrayServers(runId: string): Promise<MarkedProcess[]> {
  if (process.platform !== 'linux') return [];
  const strays = await markedProcesses(runId);
  const postmasters = strays.filter((p) => p.command.includes('-D') && /postgres$/.test(p.command[0] ?? ''));
  for (const postmaster of postmasters) signal(postmaster.pid, 'SIGQUIT');
  // An immediate shutdown takes milliseconds; whatever is still there after a few seconds is killed.
  const deadline = Date.now() + 5_000;
  while (postmasters.some((p) => alive(p.pid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const stray of await markedProcesses(runId)) signal(stray.pid, 'SIGKILL');
  for (const postmaster of postmasters) {
    const dataDir = postmaster.command[postmaster.command.indexOf('-D') + 1];
    if (dataDir && isDisposable(dataDir)) await rm(dataDir, { recursive: true, force: true });
  }
  return strays;
}

/** Only clusters in the temp folders a test makes are deleted, never one elsewhere. */
function isDisposable(dataDir: string): boolean {
  return [join('/var/tmp', 'tally-pg-'), join(tmpdir(), '/')].some((prefix) => dataDir.startsWith(prefix));
}
