import type { Queryable } from '../db/pool.js';
import type { Intent } from '../lifecycle/index.js';
import type { LockedJob } from './locked-job.js';
import { findHold, markHoldResolved } from './hold.js';
import { insertSettlement, type SettlementRow } from './settlements.js';
import type { Transfer } from './transfers.js';

export interface EventSource {
  provider: string;
  eventKey: string;
}

export interface AppliedIntent {
  settlement: SettlementRow;
  /**
   * The entries to write. The caller posts them with the account projections, last and
   * in `lockOrder` (write-decision.ts moveAccounts): a wallet's entries take their places
   * in its order under its lock, in the statement that moves it (wallet-entries.ts).
   */
  transfers: Transfer[];
  /** wallet first, then the tenant's revenue account (DESIGN.md's lock order) */
  lockOrder: string[];
  /** true when the entries charge the wallet (a capture or an upward adjustment) */
  charges: boolean;
}

/**
 * Writes one intent of decide(): the settlement row first (its unique key is the
 * financial boundary), then the hold; returns its ledger entries, which the caller
 * posts with the account projections. Runs inside settle's transaction, on the locked job.
 */
export async function applyIntent(tx: Queryable, job: LockedJob, intent: Intent, source: EventSource | null): Promise<AppliedIntent> {
  const row = job.row;
  const base = {
    key: intent.key,
    tenantId: row.tenant_id,
    jobId: row.id,
    eventProvider: source?.provider ?? null,
    eventKey: source?.eventKey ?? null,
  };
  switch (intent.kind) {
    case 'capture': {
      const settlement = await insertSettlement(tx, {
        ...base,
        chargeType: 'capture',
        version: 1,
        amount: intent.amount,
        remainder: intent.remainder,
        snapshot: intent.snapshot,
      });
      const hold = await findHold(tx, row.id);
      const transfers: Transfer[] = [
        holdTransfer(job, hold.revenue_account_id, hold.pending_entry_id, intent.key, 'capture', 'post_pending', intent.amount),
        holdTransfer(job, hold.revenue_account_id, hold.pending_entry_id, intent.key, 'release_remainder', 'void_pending', intent.remainder),
      ];
      await markHoldResolved(tx, row.id, intent.amount, intent.remainder, intent.key);
      // Only a charge can overdraw: a zero capture merely voids the hold.
      return { settlement, transfers, lockOrder: [row.wallet_id, hold.revenue_account_id], charges: intent.amount > 0n };
    }
    case 'release': {
      const settlement = await insertSettlement(tx, {
        ...base,
        chargeType: 'release',
        version: 1,
        amount: intent.amount,
        reason: intent.reason,
      });
      const hold = await findHold(tx, row.id);
      const transfers = [holdTransfer(job, hold.revenue_account_id, hold.pending_entry_id, intent.key, 'release', 'void_pending', intent.amount)];
      await markHoldResolved(tx, row.id, 0n, intent.amount, intent.key);
      return { settlement, transfers, lockOrder: [row.wallet_id, hold.revenue_account_id], charges: false };
    }
    case 'adjustment': {
      const settlement = await insertSettlement(tx, {
        ...base,
        chargeType: 'adjustment',
        version: intent.version,
        amount: intent.amount,
        snapshot: intent.snapshot,
      });
      const hold = await findHold(tx, row.id);
      const revenue = hold.revenue_account_id;
      const charge = intent.amount > 0n;
      const transfer: Transfer = {
        settlementKey: intent.key,
        entryType: 'adjustment',
        flags: 'posted',
        // a charge moves wallet → revenue; a refund moves it back
        debitAccountId: charge ? row.wallet_id : revenue,
        creditAccountId: charge ? revenue : row.wallet_id,
        amount: charge ? intent.amount : -intent.amount,
        currency: row.currency,
        tenantId: row.tenant_id,
        jobId: row.id,
      };
      return { settlement, transfers: [transfer], lockOrder: [row.wallet_id, revenue], charges: charge };
    }
  }
}

function holdTransfer(
  job: LockedJob,
  revenue: string,
  pendingId: string | null,
  key: string,
  entryType: Transfer['entryType'],
  flags: 'post_pending' | 'void_pending',
  amount: bigint,
): Transfer {
  return {
    settlementKey: key,
    entryType,
    flags,
    pendingId,
    debitAccountId: job.row.wallet_id,
    creditAccountId: revenue,
    amount,
    currency: job.row.currency,
    tenantId: job.row.tenant_id,
    jobId: job.row.id,
  };
}
