import type { JobIntent } from '../../lifecycle/index.js';

/**
 * The words of funds/ (CONTRACT.md "Credit grants"), in one place.
 *
 * - **grant**: a sub-account of a wallet with its own `remaining` (what it still holds for
 *   the wallet, held part included) and `held` (the part reserved by open holds). The
 *   wallet's balance is the sum of its grants' remaining minus its debt.
 * - **share**: the part of one job's hold allocated to one grant; `held` stays as
 *   allocated, and once the hold is resolved `captured + returned = held`.
 * - **draw**: the part of one positive adjustment taken from one grant, or from nobody
 *   (`grantId` null: debt), in the order it was taken.
 * - **consumption**: what a job actually took — its shares' `captured`, then its draws —
 *   undone latest first by a refund to the tenant.
 * - **debt**: what the wallet owes for work delivered that no grant covered. Anything that
 *   enters the wallet while it has debt pays the debt first.
 * - **posting**: one ledger entry the module asks the writer to insert, between a party of
 *   the wallet (a grant, or its debt) and a party outside it (revenue, funding, breakage),
 *   or between two parties of the wallet (a grant paying the debt).
 *
 * Instants are bigint microseconds since the epoch, read from the database's clock: a
 * `Date` keeps milliseconds, and a grant's expiry is decided to the microsecond.
 */

export type Micros = bigint;
export type Instant = bigint;

export type GrantCategory = 'paid' | 'promotional';

export interface Grant {
  readonly id: string;
  readonly category: GrantCategory;
  /** 0–100, lowest drawn first */
  readonly priority: number;
  readonly effectiveAt: Instant;
  readonly expiresAt: Instant | null;
  readonly createdAt: Instant;
  readonly remaining: Micros;
  readonly held: Micros;
  readonly voided: boolean;
  /** an open dispute freezes the grant: it funds no new hold or charge */
  readonly disputed: boolean;
  /** its expiry has posted (the sweep ran); from `expiresAt` on it funds nothing either way */
  readonly expiryPosted: boolean;
  readonly expiredAmount: Micros;
  readonly voidedAmount: Micros;
}

export interface Share {
  readonly grantId: string;
  readonly held: Micros;
  readonly captured: Micros;
  readonly returned: Micros;
  readonly refunded: Micros;
}

export interface Draw {
  /** the adjustment's correction number; 0: the part of the capture an extension took from nobody */
  readonly version: number;
  /** null: the part no grant covered, which became debt */
  readonly grantId: string | null;
  readonly amount: Micros;
  readonly refunded: Micros;
}

export interface WalletFunds {
  readonly grants: readonly Grant[];
  readonly debt: Micros;
}

/**
 * What one extension of a job's hold took from one grant, or from nobody (`grantId` null:
 * the part of a terminal event's extension no grant could hold, which its capture makes
 * debt), in the order taken. A share's `held` includes its grant's pieces; the pieces keep
 * the order a capture consumes them in: the first hold's shares, then each extension's.
 */
export interface ExtensionPiece {
  /** the extension's number N (its key is `{tenant}:{job}:extension:{N}`) */
  readonly version: number;
  readonly grantId: string | null;
  readonly amount: Micros;
}

export interface JobFunding {
  /** in allocation order, one per grant: `held` includes what extensions added to it */
  readonly shares: readonly Share[];
  /** what each extension took, by version, then in allocation order (empty: no extension) */
  readonly pieces: readonly ExtensionPiece[];
  /** in the order taken */
  readonly draws: readonly Draw[];
  /** true once a capture or release resolved the hold */
  readonly resolved: boolean;
}

export const NO_FUNDING: JobFunding = { shares: [], pieces: [], draws: [], resolved: false };

/** A party of a posting: a grant or the debt of this wallet, or an account outside it. */
export type Party = { readonly grant: string } | 'debt' | 'revenue' | 'funding' | 'breakage';

/**
 * Every entry type, the one list (the schema's ledger_entries_type_known, migrations/0019,
 * says the same), in the order statements list them. A new type is added here, given
 * its postings in job-postings.ts or grant-postings.ts, and the compiler names every
 * switch that must learn it.
 */
export const POSTING_TYPES = [
  'credit',
  'grant',
  'reserve',
  'capture',
  'release_remainder',
  'release',
  'adjustment',
  'debt_repayment',
  'grant_expiry',
  'grant_void',
  'refund',
  'refund_reversal',
  'dispute_loss',
] as const;
export type PostingType = (typeof POSTING_TYPES)[number];

/** TigerBeetle's transfer flags, as the ledger's entries carry them (migrations/0001_core.sql). */
export const POSTING_FLAGS = ['pending', 'post_pending', 'void_pending', 'posted'] as const;
export type PostingFlags = (typeof POSTING_FLAGS)[number];

export interface Posting {
  readonly type: PostingType;
  readonly flags: PostingFlags;
  /** the party debited (money leaves it) */
  readonly from: Party;
  /** the party credited (money reaches it) */
  readonly to: Party;
  /** always positive: the module writes no zero entry */
  readonly amount: Micros;
}

export type Intent =
  | { readonly kind: 'hold'; readonly amount: Micros; readonly now: Instant }
  | AtInstant<JobIntent>
  | {
      readonly kind: 'activate';
      readonly grantId: string;
      readonly amount: Micros;
      readonly entry: 'credit' | 'grant';
      readonly now: Instant;
    }
  | { readonly kind: 'expire'; readonly grantId: string; readonly now: Instant }
  | { readonly kind: 'void'; readonly grantId: string; readonly now: Instant }
  | {
      readonly kind: 'refund';
      readonly grantId: string;
      readonly amount: Micros;
      readonly entry: 'refund' | 'dispute_loss';
      readonly now: Instant;
    }
  | { readonly kind: 'refund_reversal'; readonly grantId: string; readonly amount: Micros; readonly now: Instant };

/** A job's intent (lifecycle's, as decide() yields it) at the locked wallet's instant. */
type AtInstant<I> = I extends JobIntent ? I & { readonly now: Instant } : never;

/** The intent at the locked wallet's instant. */
export function at(intent: JobIntent, now: Instant): Intent {
  return { ...intent, now };
}

/** Why an intent writes nothing: each a named result, never an exception (TigerBeetle's habit). */
export type Refusal =
  | { readonly reason: 'insufficient_funds'; readonly available: Micros; readonly requested: Micros }
  | { readonly reason: 'hold_already_resolved' }
  | { readonly reason: 'hold_exceeded'; readonly held: Micros; readonly requested: Micros }
  | { readonly reason: 'refund_exceeds_consumption'; readonly refundable: Micros; readonly requested: Micros }
  | { readonly reason: 'unknown_grant'; readonly grantId: string }
  | { readonly reason: 'expiry_not_due'; readonly grantId: string }
  | { readonly reason: 'already_expired'; readonly grantId: string }
  | { readonly reason: 'already_voided'; readonly grantId: string };

export interface WalletTotals {
  readonly balance: Micros;
  readonly reserved: Micros;
  readonly available: Micros;
  readonly debt: Micros;
  readonly balanceByCategory: { readonly paid: Micros; readonly promotional: Micros };
  readonly nextExpiry: { readonly at: Instant; readonly amount: Micros } | null;
}

export type PostingResult =
  | {
      readonly ok: true;
      readonly postings: readonly Posting[];
      readonly wallet: WalletFunds;
      readonly job: JobFunding;
      readonly totals: WalletTotals;
    }
  | { readonly ok: false; readonly refusal: Refusal };
