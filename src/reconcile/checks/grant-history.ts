import { replay, type Micros, type Party, type Posting, type PostingType } from '../../funds/posting/index.js';

/**
 * A grant's history as the posting module's postings, for `replay` (grant_drift): what its
 * entries say it holds. Pure. Nothing here adds money up: the rows become the postings
 * they were written from, and replay() does the arithmetic.
 *
 * Three kinds of history that no entry naming the grant carries:
 * - its **opening**: the remaining a wallet's balance from before grants became (0019),
 *   which no entry names — one posted posting into the grant;
 * - a **hold opened before grants**: its reserve entry names no grant, its share does. What
 *   the share still holds is a pending posting on the grant; and a capture or release of
 *   such a hold written since names the grant while the reserve it posts or voids does
 *   not — so each of those stands for its part of that reserve too (a pending posting of
 *   its amount), or the grant would lose a hold it never had by its entries;
 * - nothing else: every movement since names its grant.
 */

/** One ledger entry that names the grant, as loaded. */
export interface GrantEntry {
  entryType: PostingType;
  flags: Posting['flags'];
  amount: Micros;
  /** the wallet is the credited side (money reached the grant) */
  inbound: boolean;
  /** a capture or release of a reserve entry that names no grant (a hold opened before grants) */
  resolvesUnnamed: boolean;
}

/** What a share of an open hold still holds on the grant. */
export interface OpenShare {
  held: Micros;
  captured: Micros;
  returned: Micros;
  /** its reserve entry names no grant (a hold opened before grants) */
  unnamedReserve: boolean;
}

/** The party outside the wallet an entry of this type moves money to or from (replay reads only the grant's side). */
const OUTSIDE: Partial<Record<PostingType, Party>> = {
  grant_expiry: 'breakage',
  grant_void: 'funding',
  credit: 'funding',
  grant: 'funding',
  refund: 'funding',
  refund_reversal: 'funding',
  dispute_loss: 'funding',
};

/** The posting an entry naming `grantId` was written from (src/funds/grant-transfers.ts, read backwards). */
export function postingOf(grantId: string, entry: GrantEntry): Posting {
  const grant: Party = { grant: grantId };
  const outside = OUTSIDE[entry.entryType] ?? 'revenue';
  if (entry.entryType === 'debt_repayment')
    return { type: entry.entryType, flags: 'posted', from: grant, to: 'debt', amount: entry.amount };
  // A pending transfer and its post or void always leave the wallet (a hold).
  if (entry.flags !== 'posted' || !entry.inbound)
    return { type: entry.entryType, flags: entry.flags, from: grant, to: outside, amount: entry.amount };
  return { type: entry.entryType, flags: 'posted', from: outside, to: grant, amount: entry.amount };
}

/** The postings of one entry, with the part of an unnamed reserve it resolves. */
export function entryPostings(grantId: string, entry: GrantEntry): Posting[] {
  const posting = postingOf(grantId, entry);
  if (!entry.resolvesUnnamed) return [posting];
  return [{ type: 'reserve', flags: 'pending', from: { grant: grantId }, to: 'revenue', amount: entry.amount }, posting];
}

/** The grant's opening, and what open holds from before grants still hold on it. */
export function unnamedPostings(grantId: string, opening: Micros, openShares: readonly OpenShare[]): Posting[] {
  const postings: Posting[] = [];
  if (opening !== 0n) postings.push(signedPosted(grantId, opening));
  for (const share of openShares.filter((s) => s.unnamedReserve)) postings.push(...sharePostings(grantId, share));
  return postings;
}

/** A share as the postings that moved it: its hold, then what was captured or returned of it. */
export function sharePostings(grantId: string, share: OpenShare): Posting[] {
  const from = { grant: grantId };
  return [
    { type: 'reserve', flags: 'pending', from, to: 'revenue', amount: share.held },
    { type: 'capture', flags: 'void_pending', from, to: 'revenue', amount: share.captured },
    { type: 'release_remainder', flags: 'void_pending', from, to: 'revenue', amount: share.returned },
  ].filter((p) => p.amount > 0n) as Posting[];
}

/**
 * A grant's postings, replayed as they stream in: at most `carryAfter` are kept, then
 * replaced by what replaying them left, as postings (replay is a sum, so replaying that
 * with the rest is replaying everything). A grant with millions of entries costs the
 * memory of a few thousand.
 */
export class GrantReplay {
  private postings: Posting[] = [];

  constructor(
    private readonly grantId: string,
    private readonly carryAfter = 4096,
  ) {}

  /** The postings, `times` over (equal entries are loaded once, with how many there are). */
  add(postings: readonly Posting[], times = 1): void {
    for (let i = 0; i < times; i++) {
      this.postings.push(...postings);
      if (this.postings.length >= this.carryAfter) this.postings = this.carried();
    }
  }

  /** What the postings so far leave on the grant. */
  result(): { remaining: Micros; held: Micros } {
    return replay(this.postings).grants.get(this.grantId) ?? { remaining: 0n, held: 0n };
  }

  private carried(): Posting[] {
    const { remaining, held } = this.result();
    const from = { grant: this.grantId };
    const postings: Posting[] = [];
    if (remaining !== 0n) postings.push(signedPosted(this.grantId, remaining));
    if (held > 0n) postings.push({ type: 'reserve', flags: 'pending', from, to: 'revenue', amount: held });
    if (held < 0n) postings.push({ type: 'release', flags: 'void_pending', from, to: 'revenue', amount: -held });
    return postings;
  }
}

/** A posted amount into the grant (out of it when negative), as a positive posting. */
function signedPosted(grantId: string, amount: Micros): Posting {
  const grant = { grant: grantId };
  return amount > 0n
    ? { type: 'credit', flags: 'posted', from: 'funding', to: grant, amount }
    : { type: 'credit', flags: 'posted', from: grant, to: 'funding', amount: -amount };
}
