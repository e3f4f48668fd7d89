import { dayOf, minMicros } from './model-money.js';

/**
 * A wallet's money as the contract's "Credit grants" describes it: a set of grants, each
 * with what it still holds for the wallet (`remaining`, held part included) and what open
 * holds reserve of it (`held`), plus the wallet's `debt` — what charges took beyond every
 * grant. balance = Σ remaining − debt, reserved = Σ held, available = Σ over fundable
 * grants of (remaining − held) − debt. Every movement below is one the contract names.
 */

export interface Grant {
  readonly name: string;
  readonly category: 'paid' | 'promotional';
  readonly priority: number;
  /** ms since epoch; null: never expires */
  readonly expiresAt: number | null;
  /** creation order in the model: effective_at is the creation instant here (every op's grant is effective at once), so this breaks the last ties */
  readonly seq: number;
  /** what it brings (a payment's grant: what the payment must be) */
  amount: bigint;
  remaining: bigint;
  held: bigint;
  voided: boolean;
  expiryPosted: boolean;
  /** a checkout's or a recharge's grant before its payment: remaining and held 0, funds nothing */
  awaiting: boolean;
  /** its payment will never come (the session expired, the recharge was declined) */
  canceled: boolean;
  /** an open dispute freezes its whole unheld remaining: it funds no new hold or charge */
  disputed: boolean;
}

export type GrantSpec = Pick<Grant, 'name' | 'category' | 'priority' | 'expiresAt'>;

/** A part of a job's hold: one grant's share of the first hold or of an extension, or (grant null) what a completion's extension held against the debt. */
export interface Piece {
  readonly grant: string | null;
  readonly amount: bigint;
}

/** What a job's money took from one place (a grant, or the debt: null), and how much a refund has given back of it. */
export interface Consumption {
  readonly grant: string | null;
  readonly amount: bigint;
  refunded: bigint;
}

/** Draw-down order: lowest priority; soonest expiry, none last; promotional before paid; then creation. */
function drawDown(a: Grant, b: Grant): number {
  if (a.priority !== b.priority) return a.priority - b.priority;
  const [ea, eb] = [a.expiresAt ?? Infinity, b.expiresAt ?? Infinity];
  if (ea !== eb) return ea < eb ? -1 : 1;
  const rank = (g: Grant) => (g.category === 'promotional' ? 0 : 1);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  return a.seq - b.seq;
}

const unheld = (g: Grant) => g.remaining - g.held;

export class Funds {
  private readonly grants = new Map<string, Grant>();
  debt = 0n;
  /**
   * Called after each posting that lowers `available` (a hold, a charge beyond the holds, a
   * void, an expiry, a refund or lost dispute), at its instant: where auto-recharge decides.
   */
  lowered: (at: number) => void = () => {};

  has(name: string): boolean {
    return this.grants.has(name);
  }

  grant(name: string): Grant {
    const grant = this.grants.get(name);
    if (grant === undefined) throw new Error(`the model knows no grant ${name}`);
    return grant;
  }

  all(): Grant[] {
    return [...this.grants.values()];
  }

  /** Past its expiry at `at`, whether or not the expiry has posted: it funds nothing from that instant on. */
  expiredAt(g: Grant, at: number): boolean {
    return g.expiresAt !== null && at >= g.expiresAt;
  }

  /** May fund a hold or a charge at `at` (not voided, not expired); money reaching it stays. */
  live(g: Grant, at: number): boolean {
    return !g.voided && !this.expiredAt(g, at);
  }

  /** The grants that can fund now, with something unheld, in draw-down order. */
  fundable(at: number): Grant[] {
    return this.all()
      .filter((g) => this.live(g, at) && !g.awaiting && !g.canceled && !g.disputed && unheld(g) > 0n)
      .sort(drawDown);
  }

  available(at: number): bigint {
    return this.fundable(at).reduce((sum, g) => sum + unheld(g), 0n) - this.debt;
  }

  balance(): bigint {
    return this.all().reduce((sum, g) => sum + g.remaining, 0n) - this.debt;
  }

  reserved(): bigint {
    return this.all().reduce((sum, g) => sum + g.held, 0n);
  }

  /** `status` as the grant view says it: voided, then expired (at or after expires_at, posted or not), then depleted, else active. */
  status(g: Grant, at: number): string {
    if (g.voided) return 'voided';
    if (g.canceled) return 'canceled';
    if (g.awaiting) return 'awaiting_payment';
    if (this.expiredAt(g, at)) return 'expired';
    if (g.disputed) return 'disputed';
    return g.remaining === 0n ? 'depleted' : 'active';
  }

  /** A credit or a grant effective at once: its money enters the wallet, paying the debt first. */
  activate(spec: GrantSpec, seq: number, amount: bigint, at: number): void {
    this.awaitPayment(spec, seq, amount);
    this.pay(spec.name, at);
  }

  /** A grant awaiting its payment (a checkout's, a recharge's): it holds nothing yet. */
  awaitPayment(spec: GrantSpec, seq: number, amount: bigint): void {
    const grant: Grant = {
      ...spec,
      seq,
      amount,
      remaining: 0n,
      held: 0n,
      voided: false,
      expiryPosted: false,
      awaiting: true,
      canceled: false,
      disputed: false,
    };
    this.grants.set(spec.name, grant);
  }

  /** Its payment arrives: the money enters the wallet, paying the debt first. */
  pay(name: string, at: number): void {
    const g = this.grant(name);
    g.awaiting = false;
    g.remaining += g.amount;
    this.arrive(g, g.amount, at);
  }

  /** Its payment will never come. */
  cancel(name: string): void {
    const g = this.grant(name);
    g.awaiting = false;
    g.canceled = true;
  }

  /**
   * A refund of the grant's payment, or a lost dispute: taken from the grant's unheld
   * remaining (frozen or not), what it lacks as debt.
   */
  takeBack(name: string, amount: bigint, at: number): void {
    const g = this.grant(name);
    const take = minMicros(unheld(g) > 0n ? unheld(g) : 0n, amount);
    g.remaining -= take;
    this.debt += amount - take;
    this.lowered(at);
  }

  /** A refund that failed after it posted is credited back to its grant, as any money arriving there. */
  creditBack(name: string, amount: bigint, at: number): void {
    this.giveBack(this.grant(name), amount, at);
  }

  /** An operator's void: the unheld remaining leaves at once; shares held for jobs stay with them. */
  void(name: string, at: number): void {
    const g = this.grant(name);
    g.voided = true;
    g.remaining -= unheld(g);
    this.lowered(at);
  }

  /** Grants past their expiry whose unheld remaining has not left yet, soonest first. */
  dueExpiries(at: number): Grant[] {
    return this.all()
      .filter((g) => !g.expiryPosted && g.expiresAt !== null && g.expiresAt <= at)
      .sort((a, b) => (a.expiresAt ?? 0) - (b.expiresAt ?? 0));
  }

  /** The expiry posting: the unheld remaining leaves (breakage); held shares stay with their jobs. */
  postExpiry(g: Grant): void {
    g.remaining -= unheld(g);
    g.expiryPosted = true;
    this.lowered(g.expiresAt ?? 0);
  }

  /**
   * A hold (a reservation or an extension), split across the fundable grants in draw-down
   * order. Only a completion's extension may hold more than the grants can (`mayOwe`):
   * the rest is held against the debt, a piece of no grant.
   */
  hold(amount: bigint, at: number, mayOwe: boolean): Piece[] {
    const pieces: Piece[] = [];
    let left = amount;
    for (const g of this.fundable(at)) {
      if (left === 0n) break;
      const take = minMicros(unheld(g), left);
      g.held += take;
      pieces.push({ grant: g.name, amount: take });
      left -= take;
    }
    if (left > 0n) {
      if (!mayOwe) throw new Error(`model bug: a hold of ${amount} the grants cannot fund`);
      pieces.push({ grant: null, amount: left });
    }
    if (amount > 0n) this.lowered(at);
    return pieces;
  }

  /**
   * A capture of `amount` (0: a release) of a hold made of `pieces`: consumed in allocation
   * order (the first hold's shares, then each extension's by version; the debt's piece
   * comes last), the rest of each grant's share returned. Returns what the capture
   * consumed, one row per grant in the order it was first allocated, the debt last —
   * the order a refund undoes from the end.
   */
  resolve(pieces: readonly Piece[], amount: bigint, at: number): Consumption[] {
    const rows = new Map<string | null, { held: bigint; captured: bigint }>();
    let left = amount;
    for (const piece of pieces) {
      const take = minMicros(piece.amount, left);
      left -= take;
      const row = rows.get(piece.grant) ?? { held: 0n, captured: 0n };
      rows.set(piece.grant, { held: row.held + piece.amount, captured: row.captured + take });
    }
    if (left > 0n) throw new Error(`model bug: a capture of ${amount} beyond its hold`);
    const consumed: Consumption[] = [];
    for (const [name, row] of rows) {
      if (name === null) continue;
      const g = this.grant(name);
      g.held -= row.held;
      g.remaining -= row.captured;
      this.arrive(g, row.held - row.captured, at);
      consumed.push({ grant: name, amount: row.captured, refunded: 0n });
    }
    // What the debt's piece posts is the job's debt; its uncaptured part was never anyone's money.
    const owed = rows.get(null);
    if (owed !== undefined) {
      this.debt += owed.captured;
      consumed.push({ grant: null, amount: owed.captured, refunded: 0n });
    }
    return consumed;
  }

  /** A charge beyond the hold (a positive adjustment): drawn in draw-down order; what no grant covers is debt. */
  charge(amount: bigint, at: number): Consumption[] {
    const draws: Consumption[] = [];
    let left = amount;
    for (const g of this.fundable(at)) {
      if (left === 0n) break;
      const take = minMicros(unheld(g), left);
      g.remaining -= take;
      draws.push({ grant: g.name, amount: take, refunded: 0n });
      left -= take;
    }
    if (left > 0n) {
      this.debt += left;
      draws.push({ grant: null, amount: left, refunded: 0n });
    }
    this.lowered(at);
    return draws;
  }

  /** A refund to the tenant (a negative adjustment): the job's consumptions undone from the latest, each up to what it took. */
  refund(consumed: Consumption[], amount: bigint, at: number): void {
    let left = amount;
    for (let i = consumed.length - 1; i >= 0 && left > 0n; i--) {
      const c = consumed[i]!;
      const back = minMicros(c.amount - c.refunded, left);
      c.refunded += back;
      left -= back;
      if (c.grant === null) this.forgive(back, at);
      else this.giveBack(this.grant(c.grant), back, at);
    }
    if (left > 0n) throw new Error(`model bug: a refund of ${amount} beyond what the job consumed`);
  }

  /** Money given back to a grant: it enters, then settles as any arrival does. */
  private giveBack(g: Grant, amount: bigint, at: number): void {
    g.remaining += amount;
    this.arrive(g, amount, at);
  }

  /**
   * Undoing what was taken as debt pays the debt down. If money that entered since has
   * paid that debt already, the contract does not say which grant gets the rest back;
   * the model gives it to the first live grant in draw-down order (else the newest
   * grant, where it leaves if that grant is expired or voided): see the report's notes.
   */
  private forgive(amount: bigint, at: number): void {
    const toDebt = minMicros(this.debt, amount);
    this.debt -= toDebt;
    if (amount === toDebt) return;
    const grants = this.all();
    const target = grants.filter((g) => this.live(g, at)).sort(drawDown)[0] ?? grants[grants.length - 1];
    if (target === undefined) throw new Error('model bug: debt repaid in a wallet without grants');
    this.giveBack(target, amount - toDebt, at);
  }

  /**
   * Money that has just become free on a grant (an activation, a returned share, a refund;
   * already counted in `remaining`): on a voided or expired grant it leaves at once
   * (`grant_void` / `grant_expiry`); on a live one it pays the wallet's debt first.
   */
  private arrive(g: Grant, amount: bigint, at: number): void {
    if (amount === 0n) return;
    if (!this.live(g, at)) {
      g.remaining -= amount;
      return;
    }
    // an open dispute freezes the grant's whole unheld remaining: what reaches it stays
    // there, paying no debt (the contract's "Disputes", over "any amount that enters pays the debt first")
    if (g.disputed) return;
    const paid = minMicros(this.debt, amount);
    g.remaining -= paid;
    this.debt -= paid;
  }
}

/**
 * A tenant's spend per UTC day (docs/CONTRACT.md "Spend limits"): reservations and
 * extensions count where they commit; a resolution gives the whole hold back to the first
 * hold's day and counts what it captured where it commits; adjustments count signed.
 */
export class Spend {
  private readonly byDay = new Map<string, bigint>();

  add(atMs: number, amount: bigint): void {
    const day = dayOf(atMs);
    this.byDay.set(day, (this.byDay.get(day) ?? 0n) + amount);
  }

  on(atMs: number): bigint {
    return this.byDay.get(dayOf(atMs)) ?? 0n;
  }
}
