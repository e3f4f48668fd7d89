import { canFund, isExpiredAt, walletTotals } from './order.js';
import type { Grant, Instant, JobFunding, Micros, Party, Posting, PostingResult, PostingType, WalletFunds } from './types.js';

/**
 * The scratch state of one posting: a copy of the wallet's grants and debt that the
 * intent moves, and the postings that say how. Every movement goes through `move`, so a
 * grant's remaining and the debt change exactly as the postings do (conservation by
 * construction; the properties check it from outside anyway).
 */
export class Working {
  private readonly grants: Map<string, Grant>;
  private readonly order: string[];
  debt: Micros;
  readonly postings: Posting[] = [];

  constructor(
    wallet: WalletFunds,
    readonly now: Instant,
  ) {
    this.grants = new Map(wallet.grants.map((g) => [g.id, g]));
    this.order = wallet.grants.map((g) => g.id);
    this.debt = wallet.debt;
  }

  has(grantId: string): boolean {
    return this.grants.has(grantId);
  }

  grant(grantId: string): Grant {
    const grant = this.grants.get(grantId);
    if (!grant) throw new Error(`grant ${grantId} is not one of the wallet's grants`);
    return grant;
  }

  update(grantId: string, change: Partial<Grant>): void {
    this.grants.set(grantId, { ...this.grant(grantId), ...change });
  }

  get wallet(): WalletFunds {
    return { grants: this.order.map((id) => this.grants.get(id)!), debt: this.debt };
  }

  /**
   * One posting. Posted money moves `remaining` (and the debt); pending flags move only
   * `held`: a reservation holds part of a grant's remaining, a post or void of it stops
   * holding (the post also takes the money).
   */
  move(type: PostingType, flags: Posting['flags'], from: Party, to: Party, amount: Micros): void {
    if (amount < 0n) throw new Error(`a posting of ${amount} micros: amounts are never negative`);
    if (amount === 0n) return;
    this.postings.push({ type, flags, from, to, amount });
    if (flags === 'pending' || flags === 'void_pending' || flags === 'post_pending') {
      // Held against the debt (a terminal event's extension): no grant holds it, and only
      // its capture moves money — the debt grows by what it posts.
      if (from === 'debt') {
        if (flags === 'post_pending') this.debt += amount;
        return;
      }
      const grantId = grantOf(from);
      if (grantId === null) throw new Error(`a ${flags} posting must leave a grant`);
      const grant = this.grant(grantId);
      const held = flags === 'pending' ? grant.held + amount : grant.held - amount;
      const remaining = flags === 'post_pending' ? grant.remaining - amount : grant.remaining;
      this.update(grantId, { held, remaining });
      return;
    }
    this.shift(from, -amount);
    this.shift(to, amount);
  }

  private shift(party: Party, amount: Micros): void {
    if (party === 'debt') this.debt -= amount;
    else if (typeof party === 'object') this.update(party.grant, { remaining: this.grant(party.grant).remaining + amount });
  }

  /**
   * Money that has just reached a grant (a hold's return, a refund to the tenant, an
   * activation): on a voided or expired grant it leaves at once, keyed with the movement
   * that brought it (`grant_void` / `grant_expiry`); on a live grant it pays the debt
   * first. A disputed grant keeps it frozen.
   */
  settleArrival(grantId: string, amount: Micros): void {
    const grant = this.grant(grantId);
    if (grant.voided) {
      this.move('grant_void', 'posted', { grant: grantId }, 'funding', amount);
      this.update(grantId, { voidedAmount: this.grant(grantId).voidedAmount + amount });
    } else if (isExpiredAt(grant, this.now)) {
      this.move('grant_expiry', 'posted', { grant: grantId }, 'breakage', amount);
      this.update(grantId, { expiredAmount: this.grant(grantId).expiredAmount + amount });
    } else if (canFund(grant, this.now)) {
      this.move('debt_repayment', 'posted', { grant: grantId }, 'debt', min(amount, this.debt));
    }
  }

  done(job: JobFunding): PostingResult {
    const wallet = this.wallet;
    return { ok: true, postings: this.postings, wallet, job, totals: walletTotals(wallet, this.now) };
  }
}

export function grantOf(party: Party): string | null {
  return typeof party === 'object' ? party.grant : null;
}

export function min(a: Micros, b: Micros): Micros {
  return a < b ? a : b;
}
