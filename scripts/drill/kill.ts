import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * How the drill takes a primary down: always with SIGKILL, never a shutdown.
 *
 * - `postmaster`: the postmaster alone (the pid in its postmaster.pid), as a crash or the
 *   OOM killer would. The node's pg_autoctl keeper lives on and races the monitor: if it
 *   reports "PostgreSQL is not running" first, the monitor fails over; if it restarts
 *   PostgreSQL first, the node recovers in place and stays primary. Both happen.
 * - `node`: the node's pg_autoctl processes, then its postmaster — the machine is gone.
 *   Nothing restarts anything there; the monitor's health checks find the node dead and
 *   fail over. It comes back only when its pg_autoctl is started again.
 */
export type KillMode = 'node' | 'postmaster';
export const KILL_MODES: readonly KillMode[] = ['node', 'postmaster'];

export interface Killed {
  postmasterPid: number;
  /** the pg_autoctl processes killed with it (mode `node`) */
  keeperPids: number[];
}

export function kill(mode: KillMode, pgdata: string, keeperPid: number): Killed {
  const postmasterPid = postmasterPidOf(pgdata);
  if (postmasterPid === null) throw new Error(`no running postmaster in ${pgdata} to kill`);
  // The keeper first, so that nothing is left to restart the postmaster a moment later.
  const keeperPids = mode === 'node' ? pgAutoctlProcessesOf(keeperPid) : [];
  for (const pid of keeperPids) signal(pid);
  signal(postmasterPid);
  return { postmasterPid, keeperPids };
}

/** The postmaster's pid from its postmaster.pid, when that process is alive. */
export function postmasterPidOf(pgdata: string): number | null {
  const file = join(pgdata, 'postmaster.pid');
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  return commandLine(pid)?.includes('postgres') ? pid : null;
}

/** `pg_autoctl run` and the services it forked ("pg_autoctl: node active", "…: start/stop postgres"): its process group. */
function pgAutoctlProcessesOf(keeperPid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const stat = readOrNull(`/proc/${pid}/stat`);
    // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses, so count from its end.
    const pgrp = stat ? Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) : NaN;
    if (pgrp === keeperPid && commandLine(pid)?.includes('pg_autoctl')) pids.push(pid);
  }
  return pids.includes(keeperPid) ? pids : [keeperPid, ...pids];
}

function commandLine(pid: number): string | null {
  return readOrNull(`/proc/${pid}/cmdline`)?.replaceAll('\0', ' ') ?? null;
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
