import type { Intent, JobIntent } from '../lifecycle/index.js';
import type { HoldResolution, HoldRow } from './hold.js';
import type { LockedJob } from './locked-job.js';
import type { NewSettlement } from './settlements.js';

export interface EventSource {
  provider: string;
  eventKey: string;
}

/** What one intent of decide() writes, worked out before anything is written. */
export interface PlannedIntent {
  /** the settlement row: its unique key is the financial boundary */
  settlement: NewSettlement;
  /** whether it moves money (a hold of zero is captured or released without an entry) */
  moves: boolean;
  /** the tenant's revenue account the entries move (docs/ARCHITECTURE.md "Lock order": after the wallet) */
  revenueAccount: string;
  /** true when the entries charge the wallet (a capture or an upward adjustment) */
  charges: boolean;
  /** the hold a capture or release resolves */
  resolvesHold: HoldResolution | null;
  /**
   * What the posting module is asked (allocate.ts): it splits the movement across the
   * job's shares and the wallet's grants, and the one writer writes its postings
   * (funds/apply-postings.ts).
   */
  funding: JobIntent;
}

/** The intents a settlement row records: an extension is held before them (extend.ts). */
export type SettlingIntent = Exclude<Intent, { kind: 'extension' }>;

/**
 * Plans one intent of decide() on the locked job and its hold: the settlement, the
 * entries and the hold's resolution. Pure: the caller writes the plans of a whole batch
 * with one statement per table (write-decision.ts).
 */
export function planIntent(
  job: LockedJob,
  intent: SettlingIntent,
  hold: HoldRow,
  source: EventSource | null,
): PlannedIntent {
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
        moves: intent.amount + intent.remainder > 0n,
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
        funding: intent.posting,
      };
    case 'release':
      return {
        settlement: { ...base, chargeType: 'release', version: 1, amount: intent.amount, reason: intent.reason },
        moves: intent.amount > 0n,
        revenueAccount: revenue,
        charges: false,
        resolvesHold: { jobId: row.id, tenantId: row.tenant_id, posted: 0n, voided: intent.amount, settlementKey: intent.key },
        funding: intent.posting,
      };
    case 'adjustment': {
      const charge = intent.amount > 0n;
      return {
        settlement: {
          ...base,
          chargeType: 'adjustment',
          version: intent.version,
          amount: intent.amount,
          snapshot: intent.snapshot,
          ...(intent.reason ? { reason: intent.reason } : {}),
        },
        moves: intent.amount !== 0n,
        revenueAccount: revenue,
        charges: charge,
        resolvesHold: null,
        funding: intent.posting,
      };
    }
  }
}
