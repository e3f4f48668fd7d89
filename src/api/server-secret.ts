import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { keepFileOnce } from '../kept-file.js';

/**
 * The server-side secret that seals stored idempotent answers (a new tenant's api_key
 * among them). It never enters the database, so a dump of the database alone reveals
 * no secret, whatever Idempotency-Key a client chose.
 *
 * `TALLY_SECRET_KEY` (64 hex characters or base64 of 32 bytes) sets it; every `serve`
 * in front of one database must share it. Unset, it is made once and kept beside the
 * data in `$TALLY_DATA_DIR/secret-key` (mode 0600), which is what a laptop or a single
 * server needs.
 */
export const SECRET_FILE = 'secret-key';
const SECRET_BYTES = 32;

export class InvalidServerSecret extends Error {
  constructor(detail: string) {
    super(`TALLY_SECRET_KEY ${detail}: give 32 random bytes as 64 hex characters or base64 (e.g. \`openssl rand -hex 32\`)`);
    this.name = 'InvalidServerSecret';
  }
}

const HEX_SECRET = /^[0-9a-fA-F]{64}$/;
const BASE64_SECRET = /^[A-Za-z0-9+/]{43}=?$/; // 32 bytes

export function parseServerSecret(text: string): Buffer {
  const trimmed = text.trim();
  if (HEX_SECRET.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (BASE64_SECRET.test(trimmed)) return Buffer.from(trimmed, 'base64');
  throw new InvalidServerSecret('is not 32 bytes of hex or base64');
}

export async function loadServerSecret(settings: { secretKey: string | undefined; dataDir: string }): Promise<Buffer> {
  const configured = settings.secretKey;
  if (configured !== undefined && configured !== '') return parseServerSecret(configured);
  const kept = await keepFileOnce(resolve(settings.dataDir), SECRET_FILE, () => `${randomBytes(SECRET_BYTES).toString('hex')}\n`);
  return parseServerSecret(kept.text);
}
