import type { Micros, PostingFlags, PostingType } from './types.js';

/**
 * What one ledger entry does to the accounts it names — the flag semantics of
 * TigerBeetle's two-phase transfers, in one place. The writers move each account's
 * projection and each wallet's running balance by these effects, and nothing else
 * decides how an entry moves money.
 */

/** An entry as far as its effects go. */
export interface EntryShape {
  readonly flags: PostingFlags;
  readonly amount: Micros;
  readonly debitAccountId: string;
  readonly creditAccountId: string;
}

export interface ProjectionDelta {
  debitsPending: Micros;
  debitsPosted: Micros;
  creditsPending: Micros;
  creditsPosted: Micros;
}

/** How an entry moves the four projection columns of its debited and its credited account. */
export function projectionDelta(entry: Pick<EntryShape, 'flags' | 'amount'>): { debit: ProjectionDelta; credit: ProjectionDelta } {
  const a = entry.amount;
  const zero: ProjectionDelta = { debitsPending: 0n, debitsPosted: 0n, creditsPending: 0n, creditsPosted: 0n };
  switch (entry.flags) {
    case 'posted':
      return { debit: { ...zero, debitsPosted: a }, credit: { ...zero, creditsPosted: a } };
    case 'pending':
      return { debit: { ...zero, debitsPending: a }, credit: { ...zero, creditsPending: a } };
    case 'post_pending':
      return {
        debit: { ...zero, debitsPending: -a, debitsPosted: a },
        credit: { ...zero, creditsPending: -a, creditsPosted: a },
      };
    case 'void_pending':
      return { debit: { ...zero, debitsPending: -a }, credit: { ...zero, creditsPending: -a } };
  }
}

/** What an entry does to a wallet: its balance (posted) and its reserved amount (open holds). */
export interface WalletChange {
  balance: Micros;
  reserved: Micros;
}

/**
 * How an entry moves a wallet's balance (posted credits − posted debits) and reserved
 * amount (its pending debits). An entry between two parties of the wallet (a grant paying
 * its debt) moves neither. The one definition: the writer's running balances and
 * projections, statements, the entries list and the CSV all read an entry's effect here
 * (reconcile/checks recompute it in SQL on purpose, as the independent auditor).
 */
export function walletDelta(entry: EntryShape, walletId: string): WalletChange {
  if (entry.debitAccountId === entry.creditAccountId) return { balance: 0n, reserved: 0n };
  const posts = entry.flags === 'posted' || entry.flags === 'post_pending';
  const balance = !posts ? 0n : entry.creditAccountId === walletId ? entry.amount : entry.debitAccountId === walletId ? -entry.amount : 0n;
  let reserved = 0n;
  if (entry.debitAccountId === walletId) {
    if (entry.flags === 'pending') reserved = entry.amount;
    else if (entry.flags === 'post_pending' || entry.flags === 'void_pending') reserved = -entry.amount;
  }
  return { balance, reserved };
}

/**
 * What a change does to balance − reserved (the running `available_after`): not the wallet
 * view's `available`, which also leaves out the unheld money of grants that cannot fund
 * (expired before their expiry posts, disputed). A capture moves neither: it posts money
 * that was already held.
 */
export function availableDelta(change: WalletChange): Micros {
  return change.balance - change.reserved;
}

/**
 * How an entry moves the tenant's spend (the counters of spend limits, migrations/0014),
 * by its type: `now` counts in the period of the transaction that writes it — a
 * reservation, a capture, an adjustment (down when it pays back); `ofHold` leaves the
 * period the job's hold was created in — what a capture or a release resolves of it.
 * The money of credits, grants and payers, and a grant paying the wallet's debt, spend
 * nothing.
 */
export function spendDelta(
  entry: Pick<EntryShape, 'amount' | 'debitAccountId'> & { readonly entryType: PostingType },
  walletId: string,
): { now: Micros; ofHold: Micros } {
  switch (entry.entryType) {
    case 'reserve':
      return { now: entry.amount, ofHold: 0n };
    case 'capture':
      return { now: entry.amount, ofHold: -entry.amount };
    case 'release':
    case 'release_remainder':
      return { now: 0n, ofHold: -entry.amount };
    case 'adjustment':
      return { now: entry.debitAccountId === walletId ? entry.amount : -entry.amount, ofHold: 0n };
    default:
      return { now: 0n, ofHold: 0n };
  }
}
