import type { Queryable } from '../db/pool.js';
import { opensProviderSecrets, sealClearProviderSecrets } from '../catalog/provider-secrets.js';
import { opensPaymentSettings, sealClearWebhookSecrets } from '../funds/payments/index.js';

interface SealLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/**
 * Seals the webhook signing secrets still stored in the clear (providers', Stripe's),
 * after the migrations, at the start of `tally serve` and `tally worker` (issue 33, item
 * 9). A migration cannot: the key is derived from the server's secret, which never enters
 * the database. Not `tally migrate` either: it may run where the servers' secret is not
 * (a deploy job), and sealing with another secret would make every delivery unverifiable
 * to them. Until a start seals them, clear secrets verify as they are (both forms are
 * read), so nothing is refused in between.
 *
 * A process whose secret does not open what is already sealed (the Stripe API key, a
 * sealed secret) is misconfigured: it seals nothing and says so, rather than seal the rest
 * under a second secret that the other processes cannot open.
 */
export async function sealSecretsAtStart(db: Queryable, serverSecret: Buffer, log: SealLog): Promise<void> {
  const agrees = (await opensPaymentSettings(db, serverSecret)) && (await opensProviderSecrets(db, serverSecret));
  if (!agrees) {
    log.warn(
      {},
      'the secrets stored in the database were sealed with another server secret: nothing more is sealed; give every tally serve and worker the same TALLY_SECRET_KEY (or the same data folder)',
    );
    return;
  }
  const providers = await sealClearProviderSecrets(db, serverSecret);
  const stripe = await sealClearWebhookSecrets(db, serverSecret);
  if (providers + stripe > 0) log.info({ providers, stripe }, 'webhook secrets stored in the clear are sealed now');
}
