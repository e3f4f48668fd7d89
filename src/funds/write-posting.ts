import type { Queryable } from '../db/pool.js';
import { walletDelta, type JobFunding, type PostingResult } from './posting/index.js';
import type { LockedFunds } from './wallet-funds.js';
import { writeWalletFunds } from './wallet-funds-write.js';
import { rechargeAfterPosting } from './payments/recharge.js';
import { systemAccountIds, type SystemAccountKind } from './accounts.js';
import type { EntryRow } from './entries.js';
import { announceDepleted } from './grant-events.js';
import { transfersOf } from './grant-transfers.js';
import { moveProjections } from './transfers.js';
import { postWalletEntries } from './wallet-entries.js';
import { alertIfOverdrawn } from './overdraft.js';

export interface WrittenPosting {
  /** the entries inserted, in the posting's order */
  rows: EntryRow[];
  /** the wallet's posted balance after them */
  balance: bigint;
}

/**
 * Writes one accepted posting of a wallet that is not a job's settlement (a credit, a
 * grant's activation, expiry or void): its entries with the wallet's projection and
 * running values, the system accounts' projections (wallet first, then those accounts in
 * id order: docs/ARCHITECTURE.md, "Lock order"), the grants' and debt's new values,
 * wallet_overdrawn when it took the balance below zero, and grant.depleted for a grant it
 * used up. Under the
 * wallet lock `locked` holds. A posting that moves nothing writes only the grants' values.
 */
export async function writePosting(
  tx: Queryable,
  locked: LockedFunds,
  result: Extract<PostingResult, { ok: true }>,
  entries: { settlementKey: string; reference?: string | null },
  jobs: ReadonlyMap<string, JobFunding> = new Map(),
): Promise<WrittenPosting> {
  const parties = new Set(result.postings.flatMap((p) => [p.from, p.to]));
  const kinds = (['funding', 'revenue', 'breakage'] as const).filter((kind: SystemAccountKind) => parties.has(kind));
  const accounts = await systemAccountIds(tx, locked.tenantId, locked.currency, kinds);
  const transfers = transfersOf(result.postings, {
    walletId: locked.walletId,
    tenantId: locked.tenantId,
    currency: locked.currency,
    settlementKey: entries.settlementKey,
    reference: entries.reference ?? null,
    accounts,
  });
  let written: WrittenPosting = { rows: [], balance: 0n };
  if (transfers.length > 0) {
    const posted = await postWalletEntries(tx, locked.walletId, transfers);
    if (!posted) throw new Error(`wallet ${locked.walletId} vanished while posting ${entries.settlementKey}`);
    await moveProjections(tx, transfers, [locked.walletId, ...Object.values(accounts).sort()], new Set([locked.walletId]));
    written = posted;
    // A posting that lowered the balance below zero (an expiry or void counted against by
    // debt, money paid back to the payer after it was spent) is an overdraft, raised as a
    // charge's is; one that raised it (a credit paying part of a debt) is not.
    const change = transfers.reduce((sum, t) => sum + walletDelta(t, locked.walletId).balance, 0n);
    if (change < 0n) await alertIfOverdrawn(tx, locked, posted.balance, entries.settlementKey);
  }
  await writeWalletFunds(tx, locked, result.wallet, jobs);
  await announceDepleted(tx, locked, result.wallet, result.postings, locked.now);
  await rechargeAfterPosting(tx, locked, result.postings, result.totals.available);
  return written;
}
