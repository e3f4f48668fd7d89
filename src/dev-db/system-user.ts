import { execFileSync, spawnSync } from 'node:child_process';

/**
 * PostgreSQL refuses to run as root. When we are root, initdb, pg_ctl and postgres run
 * as the `postgres` system user (created if missing), which must be able to reach the
 * binaries and the cluster.
 */
export interface SystemUser {
  uid: number;
  gid: number;
}

function postgresUser(): SystemUser | null {
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    const user = { uid: id('-u'), gid: id('-g') };
    return Number.isInteger(user.uid) && Number.isInteger(user.gid) ? user : null;
  } catch {
    return null;
  }
}

/** null when we are not root (PostgreSQL runs as us); otherwise the `postgres` user, created if missing. */
export function postgresRunAs(): SystemUser | null {
  if (process.getuid?.() !== 0) return null;
  const existing = postgresUser();
  if (existing) return existing;
  spawnSync('groupadd', ['-f', '-r', 'postgres'], { stdio: 'ignore' });
  spawnSync('useradd', ['-r', '-g', 'postgres', '-d', '/var/lib/postgresql', '-M', '-s', '/usr/sbin/nologin', 'postgres'], { stdio: 'ignore' });
  const created = postgresUser();
  if (!created) {
    throw new Error(
      'PostgreSQL cannot run as root and there is no `postgres` user to run it as (creating one with useradd failed); create that user, run Tally as a normal user, or set DATABASE_URL',
    );
  }
  return created;
}

/** spawn() options that run a program as that user (nothing when null: as us). */
export function runningAs(user: SystemUser | null): { uid?: number; gid?: number } {
  return user ? { uid: user.uid, gid: user.gid } : {};
}

/**
 * Asks the kernel rather than reading mode bits ourselves: a shell run as that user tests
 * the path, so ACLs, groups and every ancestor folder count.
 */
export function userCanReach(user: SystemUser | null, path: string, access: 'x' | 'w' | 'r'): boolean {
  if (user === null) return true;
  return spawnSync('/bin/sh', ['-c', `test -${access} "$1"`, 'sh', path], { ...runningAs(user), stdio: 'ignore' }).status === 0;
}
