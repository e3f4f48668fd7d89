import type { Intent } from '../lifecycle/index.js';
import type { HoldResolution, HoldRow } from './hold.js';
import type { LockedJob } from './locked-job.js';
import type { NewSettlement } from './settlements.js';
import type { Transfer } from '../funds/transfers.js';

export interface EventSource {
  provider: string;
  eventKey: string;
}

/** What one intent of decide() writes, worked out before anything is written. */
export interface PlannedIntent {
  /** the settlement row: its unique key is the financial boundary */
  settlement: NewSettlement;
  /**
   * The entries to write. The caller posts them with the account projections, last and
   * wallet first (write-decision.ts moveAccounts): a wallet's entries take their places
   * in its order under its lock, in the statement that moves it (wallet-entries.ts).
   */
  transfers: Transfer[];
  /** the tenant's revenue account the entries move (docs/ARCHITECTURE.md "Lock order": after the wallet) */
  revenueAccount: string;
  /** true when the entries charge the wallet (a capture or an upward adjustment) */
  charges: boolean;
  /** the hold a capture or release resolves */
  resolvesHold: HoldResolution | null;
  /**
   * What the posting module is asked for the job's grants (write-decision.ts moveAccounts):
   * it splits `transfers`, which move the wallet as a whole, across the job's shares and
   * the wallet's grants, and the split is what is written.
   */
  funding: FundingIntent;
}

export type FundingIntent =
  { kind: 'capture'; amount: bigint } | { kind: 'release' } | { kind: 'adjustment'; version: number; amount: bigint };

/**
 * Plans one intent of decide() on the locked job and its hold: the settlement, the
 * entries and the hold's resolution. Pure: the caller writes the plans of a whole batch
 * with one statement per table (write-decision.ts).
 */
export function planIntent(job: LockedJob, intent: Intent, hold: HoldRow, source: EventSource | null): PlannedIntent {
  const row = job.row;
  const revenue = hold.revenue_account_id;
  const base = {
    key: intent.key,
    tenantId: row.tenant_id,
    jobId: row.id,
    eventProvider: source?.provider ?? null,
    eventKey: source?.eventKey ?? null,
  };
  switch (intent.kind) {
    case 'capture':
      return {
        settlement: {
          ...base,
          chargeType: 'capture',
          version: 1,
          amount: intent.amount,
          remainder: intent.remainder,
          snapshot: intent.snapshot,
        },
        transfers: [
          holdTransfer(job, hold, intent.key, 'capture', 'post_pending', intent.amount),
          holdTransfer(job, hold, intent.key, 'release_remainder', 'void_pending', intent.remainder),
        ],
        revenueAccount: revenue,
        // Only a charge can overdraw: a zero capture merely voids the hold.
        charges: intent.amount > 0n,
        resolvesHold: {
          jobId: row.id,
          tenantId: row.tenant_id,
          posted: intent.amount,
          voided: intent.remainder,
          settlementKey: intent.key,
        },
        funding: { kind: 'capture', amount: intent.amount },
      };
    case 'release':
      return {
        settlement: { ...base, chargeType: 'release', version: 1, amount: intent.amount, reason: intent.reason },
        transfers: [holdTransfer(job, hold, intent.key, 'release', 'void_pending', intent.amount)],
        revenueAccount: revenue,
        charges: false,
        resolvesHold: { jobId: row.id, tenantId: row.tenant_id, posted: 0n, voided: intent.amount, settlementKey: intent.key },
        funding: { kind: 'release' },
      };
    case 'adjustment': {
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
      return {
        settlement: {
          ...base,
          chargeType: 'adjustment',
          version: intent.version,
          amount: intent.amount,
          snapshot: intent.snapshot,
          ...(intent.reason ? { reason: intent.reason } : {}),
        },
        transfers: [transfer],
        revenueAccount: revenue,
        charges: charge,
        resolvesHold: null,
        funding: { kind: 'adjustment', version: intent.version, amount: intent.amount },
      };
    }
  }
}

function holdTransfer(
  job: LockedJob,
  hold: HoldRow,
  key: string,
  entryType: Transfer['entryType'],
  flags: 'post_pending' | 'void_pending',
  amount: bigint,
): Transfer {
  return {
    settlementKey: key,
    entryType,
    flags,
    pendingId: hold.pending_entry_id,
    debitAccountId: job.row.wallet_id,
    creditAccountId: hold.revenue_account_id,
    amount,
    currency: job.row.currency,
    tenantId: job.row.tenant_id,
    jobId: job.row.id,
  };
}
