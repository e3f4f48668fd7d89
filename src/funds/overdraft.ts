import type { Queryable } from '../db/pool.js';
import { formatAmount } from '../money/index.js';
import { enqueueMessage } from '../outbound/enqueue.js';
import { raiseEachAlert } from '../alerts/index.js';

/**
 * A posting that is not a job's charge took the wallet below zero: the expiry or void of a
 * grant whose remaining the wallet's debt had been counted against, money paid back to the
 * payer after it was spent. Raised like a charge's overdraft (wallet_overdrawn, keyed by
 * the posting's key, and the tenant's wallet.overdrawn message), in the posting's
 * transaction. Nothing when the balance is not below zero.
 */
export async function alertIfOverdrawn(
  tx: Queryable,
  wallet: { walletId: string; tenantId: string; currency: string },
  balance: bigint,
  source: string,
): Promise<void> {
  if (balance >= 0n) return;
  await raiseEachAlert(tx, [
    {
      class: 'wallet_overdrawn',
      tenantId: wallet.tenantId,
      jobId: null,
      source,
      detail: { wallet_id: wallet.walletId, balance: balance.toString() },
    },
  ]);
  await enqueueMessage(tx, {
    tenantId: wallet.tenantId,
    type: 'wallet.overdrawn',
    data: { wallet_id: wallet.walletId, currency: wallet.currency, balance: formatAmount(balance) },
  });
}
