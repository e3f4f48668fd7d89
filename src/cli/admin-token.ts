import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { keepFileOnce, readKeptFile } from '../kept-file.js';

/**
 * The embedded setup's admin token, kept with its data so that it survives a restart:
 * a token made anew at every start would lock out every terminal and script that
 * copied the last one. With TALLY_ADMIN_TOKEN set, or on your own database
 * (DATABASE_URL), nothing is kept: the operator chooses the token.
 */
export const ADMIN_TOKEN_FILE = 'admin-token';

export class InvalidKeptToken extends Error {
  constructor(path: string) {
    super(`the admin token file ${path} is empty or holds more than one word: delete it (serve makes a new one) or set TALLY_ADMIN_TOKEN`);
    this.name = 'InvalidKeptToken';
  }
}

function tokenOf(text: string, path: string): string {
  const token = text.trim();
  if (!/^\S+$/.test(token)) throw new InvalidKeptToken(path);
  return token;
}

/** The kept token of `dataDir`, made there (mode 0600) the first time. */
export async function keptAdminToken(dataDir: string): Promise<{ token: string; path: string; created: boolean }> {
  const kept = await keepFileOnce(dataDir, ADMIN_TOKEN_FILE, () => `${randomBytes(24).toString('base64url')}\n`);
  return { token: tokenOf(kept.text, kept.path), path: kept.path, created: kept.created };
}

/** The kept token of `dataDir` if a `serve` made one; never makes one. */
export async function readKeptAdminToken(dataDir: string): Promise<string | null> {
  const text = await readKeptFile(dataDir, ADMIN_TOKEN_FILE);
  return text === null ? null : tokenOf(text, join(dataDir, ADMIN_TOKEN_FILE));
}
