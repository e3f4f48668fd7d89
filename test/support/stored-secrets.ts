import { loadServerSecret } from '../../src/api/server-secret.js';
import { openProviderSecrets } from '../../src/catalog/provider-secrets.js';
import { loadConfig } from '../../src/config/load.js';
import type { Pool } from '../../src/db/pool.js';

/**
 * A provider's secrets as they verify, read from the table and opened (they are stored
 * sealed, issue 33 item 9) with the secret a `tally serve` started by startServer without
 * TALLY_SECRET_KEY uses: the environment's, else the data folder's kept file. Null when
 * there is no such provider.
 */
export async function openedProviderSecrets(pool: Pool, provider: string): Promise<string[] | null> {
  const result = await pool.query<{ secrets: string[] }>('select secrets from providers where name = $1', [provider]);
  const row = result.rows[0];
  if (!row) return null;
  return openProviderSecrets(row, await loadServerSecret(loadConfig(process.env))).secrets;
}
