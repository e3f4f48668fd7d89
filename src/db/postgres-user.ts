import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';

/**
 * PostgreSQL refuses to run as root. When we are root, initdb and postgres run as the
 * `postgres` system user (created if missing), and that user must be able to reach
 * both the binaries and the data folder.
 */
export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

export interface SystemUser {
  uid: number;
  gid: number;
}

export function postgresUser(): SystemUser | null {
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null;
  } catch {
    return null;
  }
}

/**
 * The user the PostgreSQL processes run as: null when we are not root (they run as
 * us); when we are root the `postgres` user, created if missing.
 */
export function postgresRunAs(): SystemUser | null {
  if (!isRoot()) return null;
  const existing = postgresUser();
  if (existing) return existing;
  for (const [command, args] of [
    ['groupadd', ['-f', '-r', 'postgres']],
    ['useradd', ['-r', '-g', 'postgres', '-d', '/var/lib/postgresql', '-M', '-s', '/usr/sbin/nologin', 'postgres']],
  ] as const) {
    spawnSync(command, [...args], { stdio: 'ignore' });
  }
  const created = postgresUser();
  if (!created) {
    throw new Error(
      'PostgreSQL cannot run as root and there is no `postgres` user to run it as (creating one with useradd failed); create that user, run Tally as a normal user, or set DATABASE_URL',
    );
  }
  return created;
}

/**
 * Asks the kernel, not our own reading of mode bits: a shell run as that user tests
 * the path. ACLs, groups and every ancestor folder are then accounted for.
 */
export function userCanReach(user: SystemUser | null, path: string, access: 'x' | 'w' | 'r'): boolean {
  if (user === null) return true; // not root: PostgreSQL runs as us
  const result = spawnSync('/bin/sh', ['-c', `test -${access} "$1"`, 'sh', path], {
    uid: user.uid,
    gid: user.gid,
    stdio: 'ignore',
  });
  return result.status === 0;
}

/**
 * When the process started (clock ticks since boot, from /proc), so a pid recorded in
 * a file can be told apart from a later process that reuses the number. null where
 * /proc is not available.
 */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Whether the process runs (a zombie — exited, not yet reaped — does not). With
 * `startedAt` it must also be the same process that was recorded, not a reuse of its pid.
 */
export function processAlive(pid: number, startedAt?: string | null): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return false;
    if (startedAt && fields[19] !== startedAt) return false;
  } catch {
    // no /proc (not Linux), or it exited meanwhile: kill(0) decided
  }
  return true;
}

/** The working directory of a process (PostgreSQL processes run in their data folder), or null. */
export function processCwd(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return null;
  }
}
