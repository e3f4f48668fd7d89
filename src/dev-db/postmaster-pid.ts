import { existsSync, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { link, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { sleep } from '../backoff.js';

/**
 * PostgreSQL's own record of the server running on a cluster: `postmaster.pid` (its pid
 * on the first line, its port on the fourth). It is what keeps two servers off one
 * cluster; we read it instead of keeping a record of our own.
 */
export interface Postmaster {
  pid: number;
  port: number;
}

const pidFile = (pgdata: string) => join(pgdata, 'postmaster.pid');

function readPidFile(pgdata: string): string | null {
  try {
    return readFileSync(pidFile(pgdata), 'utf8');
  } catch {
    return null;
  }
}

/**
 * Whether a process runs: an exited one that nobody reaped yet (a zombie, which an
 * orphaned postmaster becomes under an init that does not reap) does not.
 */
export function processRuns(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return existsSync('/proc/self') ? false : true; // gone meanwhile; without /proc kill(0) decided
  }
}

/**
 * A process really serving this cluster: a PostgreSQL process works in its cluster's
 * folder, so a pid reused by something else (after a reboot) is not taken for it.
 * Without /proc (not Linux) the pid alone decides.
 */
function servesCluster(pid: number, pgdata: string): boolean {
  if (!processRuns(pid)) return false;
  if (!existsSync('/proc/self')) return true;
  try {
    return realpathSync(readlinkSync(`/proc/${pid}/cwd`)) === realpathSync(pgdata);
  } catch {
    return false;
  }
}

/** The postmaster postmaster.pid names, if it runs on this cluster (it may still be starting or stopping). */
export function livePostmaster(pgdata: string): Postmaster | null {
  const lines = readPidFile(pgdata)?.split('\n');
  if (!lines) return null;
  const pid = Number(lines[0]);
  return servesCluster(pid, pgdata) ? { pid, port: Number(lines[3]) } : null;
}

/**
 * PostgreSQL removes a pid file whose process is gone (after checking that no orphaned
 * backend still uses the cluster's shared memory), but refuses to start while that pid
 * lives on as a zombie or as an unrelated process (a reboot reused it). Those files are
 * removed here — once no process works in the cluster any more, since the file is what
 * protects it from two servers at once. It is moved aside first and put back if it
 * changed meanwhile: a server started by a concurrent command keeps its file.
 */
export async function removeStalePidFile(pgdata: string, log: (message: string) => void): Promise<void> {
  const seen = readPidFile(pgdata);
  const pid = Number(seen?.split('\n')[0]);
  if (seen === null || !pidExists(pid) || livePostmaster(pgdata)) return;
  const folder = realpathSync(pgdata);
  const deadline = Date.now() + 15_000;
  while (processesIn(folder).length > 0) {
    if (Date.now() > deadline) {
      const left = processesIn(folder);
      throw new Error(`processes ${left.join(', ')} of an earlier PostgreSQL still use ${pgdata}; stop them (kill ${left.join(' ')}) and retry`);
    }
    await sleep(50); // other processes' exits: there is no event to await
  }
  const aside = `${pidFile(pgdata)}.stale-${process.pid}`;
  if (!(await rename(pidFile(pgdata), aside).then(() => true, () => false))) return;
  if ((await readFile(aside, 'utf8').catch(() => seen)) !== seen) await link(aside, pidFile(pgdata)).catch(() => {});
  else log(`removed the stale ${pidFile(pgdata)} (process ${pid} is not its server)`);
  await rm(aside, { force: true });
}

function pidExists(pid: number): boolean {
  try {
    return Number.isSafeInteger(pid) && pid > 0 && process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Running processes whose working directory is that folder (a cluster's server processes). */
function processesIn(folder: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/cwd`) === folder && processRuns(pid);
      } catch {
        return false;
      }
    });
}
