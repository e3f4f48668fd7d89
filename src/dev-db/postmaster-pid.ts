import { existsSync, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { link, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** PostgreSQL's own record of the server on a cluster (pid on the first line, port on the fourth), read instead of one of ours. */
function readPidFile(pgdata: string): string | null {
  try {
    return readFileSync(join(pgdata, 'postmaster.pid'), 'utf8');
  } catch {
    return null;
  }
}

/**
 * Whether a process runs, in `folder` if given: a cluster's server processes work in its folder, so a pid
 * reused after a reboot is not taken for its server, and a zombie (what an orphaned postmaster becomes under
 * an init that does not reap) works in none. Without /proc (not Linux) the pid alone decides.
 */
export function processRuns(pid: number, folder?: string): boolean {
  const linux = existsSync('/proc/self');
  try {
    if (!linux) return pid > 0 && process.kill(pid, 0);
    const cwd = readlinkSync(`/proc/${pid}/cwd`);
    return folder === undefined || cwd === realpathSync(folder);
  } catch (error) {
    return !linux && (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The postmaster postmaster.pid names, if it runs on this cluster (it may still be starting or stopping). */
export function livePostmaster(pgdata: string): { pid: number; port: number } | null {
  const lines = readPidFile(pgdata)?.split('\n');
  const pid = Number(lines?.[0]);
  return lines && processRuns(pid, pgdata) ? { pid, port: Number(lines[3]) } : null;
}

/**
 * PostgreSQL removes a pid file whose process is gone, but refuses to start while that pid lives on as a zombie or
 * as an unrelated process. Such a file is removed here once no process works in the cluster (until then PostgreSQL
 * refuses and the start is retried: the file keeps a new server off orphaned backends' shared memory). It is moved
 * aside and put back if it changed meanwhile: a concurrent command's new server keeps its file.
 */
export async function removeStalePidFile(pgdata: string, log: (message: string) => void): Promise<void> {
  const seen = readPidFile(pgdata);
  if (seen === null || !existsSync('/proc/self') || readdirSync('/proc').some((entry) => processRuns(Number(entry), pgdata))) return;
  const [pidFile, aside] = [join(pgdata, 'postmaster.pid'), join(pgdata, `postmaster.pid.stale-${process.pid}`)];
  if ((await rename(pidFile, aside).catch(() => 'gone')) === 'gone') return;
  if (readFileSync(aside, 'utf8') !== seen) await link(aside, pidFile).catch(() => {});
  else log(`removed the stale ${pidFile} (process ${seen.split('\n')[0]} is not its server)`);
  await rm(aside, { force: true });
}
