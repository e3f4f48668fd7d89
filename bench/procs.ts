import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

/**
 * Linux /proc readers: CPU time and peak memory of the processes under test. Each
 * returns null where /proc (or the process) is not there, and the report says "n/a".
 */

let ticksPerSecond: number | null = null;

/** USER_HZ: the unit of utime/stime in /proc/<pid>/stat (almost always 100). */
export function clockTicks(): number {
  if (ticksPerSecond === null) {
    const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    const n = Number(out.stdout?.trim());
    ticksPerSecond = Number.isFinite(n) && n > 0 ? n : 100;
  }
  return ticksPerSecond;
}

export interface ProcStat {
  ppid: number;
  /** utime + stime of the process itself */
  ticks: number;
  /** cutime + cstime: children it has waited for (a postmaster's exited backends) */
  reapedTicks: number;
}

export function procStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) may contain spaces; everything after its ')' is fixed.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const field = (n: number) => Number(fields[n - 3]);
  return { ppid: field(4), ticks: field(14) + field(15), reapedTicks: field(16) + field(17) };
}

/** VmHWM: the process's peak resident set, in bytes. */
export function peakRssBytes(pid: number): number | null {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

export function childrenOf(ppid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  return entries.filter((e) => /^\d+$/.test(e)).map(Number).filter((pid) => procStat(pid)?.ppid === ppid);
}

/**
 * Nanoseconds the process spent runnable but waiting for a CPU (/proc/<pid>/schedstat,
 * second field): how much a busy machine delayed it, apart from its own work.
 */
export function runQueueWaitNs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(' ');
    const wait = Number(fields[1]);
    return Number.isFinite(wait) ? wait : null;
  } catch {
    return null;
  }
}

/** The whole machine's CPU ticks (/proc/stat): busy (not idle or iowait) and all. */
export function machineTicks(): { busy: number; total: number } | null {
  try {
    const first = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const ticks = first.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = ticks.reduce((a, b) => a + b, 0);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

/** CPU ticks of a PostgreSQL server: the postmaster, each live child, and the exited ones. */
export interface PostgresCpu {
  postmaster: number;
  reaped: number;
  children: Map<number, number>;
  /** run-queue wait (ns) of each live child */
  waits: Map<number, number>;
}

export function postgresCpu(postmasterPid: number): PostgresCpu | null {
  const master = procStat(postmasterPid);
  if (!master) return null;
  const children = new Map<number, number>();
  const waits = new Map<number, number>();
  for (const pid of childrenOf(postmasterPid)) {
    const stat = procStat(pid);
    if (stat) children.set(pid, stat.ticks);
    const wait = runQueueWaitNs(pid);
    if (wait !== null) waits.set(pid, wait);
  }
  return { postmaster: master.ticks, reaped: master.reapedTicks, children, waits };
}

/**
 * CPU seconds each PostgreSQL process spent between two snapshots. A backend that
 * exited in between is counted through the postmaster's reaped total (its whole life,
 * less what it had already used at the first snapshot).
 */
export function postgresCpuDelta(
  before: PostgresCpu,
  after: PostgresCpu,
): { byPid: Map<number, number>; exited: number; postmaster: number; runQueueWait: number } {
  const hz = clockTicks();
  const byPid = new Map<number, number>();
  for (const [pid, ticks] of after.children) byPid.set(pid, (ticks - (before.children.get(pid) ?? 0)) / hz);
  let exitedBefore = 0;
  for (const [pid, ticks] of before.children) if (!after.children.has(pid)) exitedBefore += ticks;
  let waitNs = 0;
  for (const [pid, ns] of after.waits) waitNs += ns - (before.waits.get(pid) ?? 0);
  return {
    byPid,
    exited: (after.reaped - before.reaped - exitedBefore) / hz,
    postmaster: (after.postmaster - before.postmaster) / hz,
    runQueueWait: waitNs / 1e9,
  };
}
