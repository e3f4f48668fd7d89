import type { Queryable } from '../db/pool.js';
import { SEALED_PREFIX, isSealed, openSecrets, opensAll, sealClear, sealSecret } from '../sealed-secrets.js';

/**
 * Providers' Standard Webhooks signing secrets at rest (issue 33, item 9): sealed one by
 * one under the server's secret (sealed-secrets.ts), so a dump of `providers` is not
 * enough to sign a delivery. A value stored without the seal's prefix is a secret written
 * in the clear (before migration 0027, or by hand in SQL): it verifies as it is, so no
 * delivery is refused while it waits, and `tally serve` / `tally worker` seal it at
 * start (sealClearProviderSecrets). Rotation is unchanged: every element, sealed or not,
 * is one active secret.
 */

const USE = 'provider_webhook_secret';
const WHAT = "a provider's webhook secret";

export function sealProviderSecrets(secrets: readonly string[], serverSecret: Buffer): string[] {
  return secrets.map((secret) => sealSecret(secret, USE, serverSecret));
}

/** The row with its secrets opened, as they verify. Throws SecretUnsealable under another server secret. */
export function openProviderSecrets<Row extends { secrets: string[] }>(row: Row, serverSecret: Buffer): Row {
  return { ...row, secrets: openSecrets(row.secrets, USE, serverSecret, WHAT) };
}

/** Whether this server secret opens every sealed provider secret (true when none is sealed yet). */
export async function opensProviderSecrets(db: Queryable, serverSecret: Buffer): Promise<boolean> {
  const result = await db.query<{ secrets: string[] }>(
    'select secrets from providers where exists (select 1 from unnest(secrets) s where starts_with(s, $1))',
    [SEALED_PREFIX],
  );
  return result.rows.every((row) => opensAll(row.secrets, USE, serverSecret));
}

/**
 * Seals the secrets still stored in the clear; returns how many. Each row's write is
 * conditional on the value read, so a PATCH committed in between (which sealed its own)
 * is never overwritten; a row that lost that race is sealed at the next start.
 */
export async function sealClearProviderSecrets(db: Queryable, serverSecret: Buffer): Promise<number> {
  const result = await db.query<{ name: string; secrets: string[] }>(
    'select name, secrets from providers where exists (select 1 from unnest(secrets) s where not starts_with(s, $1))',
    [SEALED_PREFIX],
  );
  let sealed = 0;
  for (const row of result.rows) {
    const written = await db.query('update providers set secrets = $2 where name = $1 and secrets = $3::text[]', [
      row.name,
      sealClear(row.secrets, USE, serverSecret),
      row.secrets,
    ]);
    if (written.rowCount === 1) sealed += row.secrets.filter((value) => !isSealed(value)).length;
  }
  return sealed;
}
