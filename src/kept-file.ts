import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A small secret kept beside the data (`$TALLY_DATA_DIR/secret-key`,
 * `$TALLY_DATA_DIR/admin-token`): made once, readable by its owner only (mode 0600), and
 * the same for every process of that folder from then on.
 */
export interface KeptFile {
  text: string;
  path: string;
  /** true when this call made it */
  created: boolean;
}

/** The file's text, or null when it does not exist. */
export async function readKeptFile(dir: string, name: string): Promise<string | null> {
  return await readFile(join(dir, name), 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
}

/** Reads `dir/name`, or makes it with `make()` when it does not exist yet. */
export async function keepFileOnce(dir: string, name: string, make: () => string): Promise<KeptFile> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, name);
  const existing = await readKeptFile(dir, name);
  if (existing !== null) return { text: existing, path, created: false };
  // Several processes may start at once: each writes its own candidate and links it
  // into place; link() fails when the file exists, so exactly one candidate wins and
  // nobody ever reads a half-written file.
  const candidate = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(candidate, make(), { mode: 0o600 });
  let created = true;
  try {
    await link(candidate, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    created = false;
  } finally {
    await rm(candidate, { force: true });
  }
  return { text: await readFile(path, 'utf8'), path, created };
}
