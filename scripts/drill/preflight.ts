import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { ROOT } from './app.js';
import type { RunAs } from './processes.js';

/**
 * What the drill needs before it starts anything, each missing piece said with the
 * command that provides it: root (pg_autoctl refuses to run as root, so its nodes run as
 * the `postgres` user, and only root can start them as that user and SIGKILL their
 * postmaster), pg_autoctl, a PostgreSQL (15 or later) with the pgautofailover extension,
 * and Tally's build.
 */

export interface Toolchain {
  pgAutoctl: string;
  /** e.g. /usr/lib/postgresql/15/bin: pg_ctl, and the server pg_autoctl starts */
  pgBindir: string;
  pgVersion: number;
  postgresUser: RunAs;
}

const INSTALL =
  'Install it (Debian 12, whose PostgreSQL is 15): apt-get install postgresql-15-auto-failover pg-auto-failover-cli — ' +
  'elsewhere the PGDG repository has pg-auto-failover-cli and postgresql-<version>-auto-failover.';

export class PreflightFailure extends Error {}

export function preflight(): Toolchain {
  if (process.getuid?.() !== 0) {
    throw new PreflightFailure(
      'the drill must run as root: its PostgreSQL nodes run as the `postgres` user (pg_autoctl refuses root), and it SIGKILLs their postmaster. Run it with sudo.',
    );
  }
  const pgAutoctl = onPath('pg_autoctl');
  if (!pgAutoctl) throw new PreflightFailure(`pg_autoctl was not found on PATH. ${INSTALL}`);
  const server = postgresWithAutoFailover();
  if (!server) {
    throw new PreflightFailure(`no PostgreSQL 15 or later with the pgautofailover extension under /usr/lib/postgresql. ${INSTALL}`);
  }
  const postgresUser = userIds('postgres');
  if (!postgresUser)
    throw new PreflightFailure('there is no `postgres` OS user (the postgresql-common package creates it). apt-get install postgresql-15');
  if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js')))
    throw new PreflightFailure('Tally is not built: run npm run build (npm run drill:failover does).');
  return { pgAutoctl, ...server, postgresUser };
}

function onPath(program: string): string | null {
  for (const folder of (process.env.PATH ?? '').split(delimiter).concat('/usr/bin')) {
    if (folder && existsSync(join(folder, program))) return join(folder, program);
  }
  return null;
}

/** The newest Debian-layout PostgreSQL (15+) that has both pg_ctl and the pgautofailover library. */
function postgresWithAutoFailover(): { pgBindir: string; pgVersion: number } | null {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const versions = readdirSync(base)
    .map(Number)
    .filter((v) => Number.isInteger(v) && v >= 15)
    .sort((a, b) => b - a);
  for (const version of versions) {
    const dir = join(base, String(version));
    if (existsSync(join(dir, 'bin', 'pg_ctl')) && existsSync(join(dir, 'lib', 'pgautofailover.so')))
      return { pgBindir: join(dir, 'bin'), pgVersion: version };
  }
  return null;
}

function userIds(name: string): RunAs | null {
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    return null;
  }
}
