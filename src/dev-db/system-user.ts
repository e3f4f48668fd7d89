import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { dirname } from 'node:path';

/**
 * PostgreSQL refuses to run as root: as root, initdb, pg_ctl and postgres run as the `postgres`
 * system user (created if missing). A SystemUser is also the spawn() options that run as it.
 */
export interface SystemUser {
  uid: number;
  gid: number;
}

function postgresUser(): SystemUser | null {
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    return null;
  }
}

/** null when we are not root (PostgreSQL runs as us); otherwise the `postgres` user, created if missing. */
export function postgresRunAs(): SystemUser | null {
  if (process.getuid?.() !== 0) return null;
  const create = 'groupadd -f -r postgres; useradd -r -g postgres -d /var/lib/postgresql -M -s /usr/sbin/nologin postgres';
  if (!postgresUser()) spawnSync('/bin/sh', ['-c', create], { stdio: 'ignore' });
  const user = postgresUser();
  if (user) return user;
  throw new Error(
    'PostgreSQL cannot run as root and there is no `postgres` user to run it as (creating one with useradd failed); create that user, run Tally as a normal user, or set DATABASE_URL',
  );
}

/** Asks the kernel, not the mode bits: a shell run as that user tests the path, so ACLs, groups and ancestors count. */
export function userCanReach(user: SystemUser | null, path: string, access: 'x' | 'w' | 'r'): boolean {
  return user === null || spawnSync('/bin/sh', ['-c', `test -${access} "$1"`, 'sh', path], { ...user, stdio: 'ignore' }).status === 0;
}

/** Runs a program to completion as `user` (null: as us), collecting its output or sending it to a descriptor. */
export function run(program: string, args: string[], user: SystemUser | null, stdio?: number) {
  return new Promise<{ code: number | string; output: string }>((resolve, reject) => {
    // The program's own folder: the postgres user may not be able to enter ours.
    const child = spawn(program, args, { cwd: dirname(program), stdio: ['ignore', stdio ?? 'pipe', stdio ?? 'pipe'], ...user });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code: code ?? String(signal), output }));
  });
}
