import type { Grant, Instant, Micros, WalletFunds, WalletTotals } from './types.js';

/**
 * The draw-down order (CONTRACT.md "Credit grants"), the one comparator: lowest priority
 * first; then soonest expiry, no expiry last; then promotional before paid; then earliest
 * effective, then creation, then id. The index that loads a wallet's live grants mirrors it.
 */
export function drawDownOrder(a: Grant, b: Grant): number {
  return (
    a.priority - b.priority ||
    compareExpiry(a.expiresAt, b.expiresAt) ||
    categoryRank(a) - categoryRank(b) ||
    compareInstants(a.effectiveAt, b.effectiveAt) ||
    compareInstants(a.createdAt, b.createdAt) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

function compareExpiry(a: Instant | null, b: Instant | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return compareInstants(a, b);
}

function compareInstants(a: Instant, b: Instant): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function categoryRank(grant: Grant): number {
  return grant.category === 'promotional' ? 0 : 1;
}

export function unheld(grant: Grant): Micros {
  return grant.remaining - grant.held;
}

/** Past its expiry at `now`, whether or not the sweep has posted it yet: it funds nothing. */
export function isExpiredAt(grant: Grant, now: Instant): boolean {
  return grant.expiryPosted || (grant.expiresAt !== null && now >= grant.expiresAt);
}

/**
 * May fund a new hold or charge at `now`: effective, not expired, not voided, not frozen
 * by a dispute. (Whether it has unheld remaining is for the caller to ask.)
 */
export function canFund(grant: Grant, now: Instant): boolean {
  return grant.effectiveAt <= now && !isExpiredAt(grant, now) && !grant.voided && !grant.disputed;
}

/** The grants that can fund at `now` and have something unheld, in draw-down order. */
export function fundableGrants(wallet: WalletFunds, now: Instant): Grant[] {
  return wallet.grants.filter((g) => canFund(g, now) && unheld(g) > 0n).sort(drawDownOrder);
}

export function availableAt(wallet: WalletFunds, now: Instant): Micros {
  return fundableGrants(wallet, now).reduce((sum, g) => sum + unheld(g), 0n) - wallet.debt;
}

/** Everything the wallet view shows, from its grants and debt. Nobody else adds these up. */
export function walletTotals(wallet: WalletFunds, now: Instant): WalletTotals {
  let remaining = 0n;
  let reserved = 0n;
  const byCategory = { paid: 0n, promotional: 0n };
  for (const grant of wallet.grants) {
    remaining += grant.remaining;
    reserved += grant.held;
    byCategory[grant.category] += grant.remaining;
  }
  return {
    balance: remaining - wallet.debt,
    reserved,
    available: availableAt(wallet, now),
    debt: wallet.debt,
    balanceByCategory: byCategory,
    nextExpiry: nextExpiry(wallet, now),
  };
}

/** The soonest instant at which fundable, unheld credit lapses, and how much lapses then. */
function nextExpiry(wallet: WalletFunds, now: Instant): WalletTotals['nextExpiry'] {
  let next: { at: Instant; amount: Micros } | null = null;
  for (const grant of fundableGrants(wallet, now)) {
    if (grant.expiresAt === null) continue;
    if (next === null || grant.expiresAt < next.at) next = { at: grant.expiresAt, amount: unheld(grant) };
    else if (grant.expiresAt === next.at) next = { at: next.at, amount: next.amount + unheld(grant) };
  }
  return next;
}
