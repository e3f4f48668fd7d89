import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  NO_FUNDING,
  availableAt,
  canFund,
  drawDownOrder,
  post,
  replay,
  unheld,
  type Grant,
  type Intent,
  type JobFunding,
  type Posting,
  type PostingResult,
  type WalletFunds,
} from '../../src/funds/posting/index.js';
import { T0, funded, grantFixture, ok } from '../support/grant-fixture.js';

const grant = grantFixture;


describe('the draw-down order', () => {
  it('is priority, then soonest expiry (none last), then promotional before paid, then effective, creation, id', () => {
    const grants = [
      grant('h', { priority: 60 }),
      grant('g', { priority: 50 }),
      grant('f', { priority: 50, expiresAt: T0 + 10n }),
      grant('e', { priority: 50, expiresAt: T0 + 5n }),
      grant('d', { priority: 50, expiresAt: T0 + 5n, category: 'promotional' }),
      grant('c', { priority: 50, expiresAt: T0 + 5n, category: 'promotional', effectiveAt: T0 - 1n }),
      grant('b', { priority: 50, expiresAt: T0 + 5n, category: 'promotional', effectiveAt: T0 - 1n, createdAt: T0 - 1n }),
      grant('a', { priority: 50, expiresAt: T0 + 5n, category: 'promotional', effectiveAt: T0 - 1n, createdAt: T0 - 1n }),
      grant('z', { priority: 0 }),
    ];
    expect([...grants].sort(drawDownOrder).map((g) => g.id)).toEqual(['z', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
  });
});

describe('postings, hand computed', () => {
  it('a hold splits across grants in order; the capture consumes shares in allocation order and returns the rest of each', () => {
    const { wallet } = funded([grant('paid'), grant('promo', { category: 'promotional' })], [1_000n, 300n]);
    const hold = ok(post(wallet, NO_FUNDING, { kind: 'hold', amount: 500n, now: T0 }));
    expect(hold.job.shares.map((s) => [s.grantId, s.held])).toEqual([['promo', 300n], ['paid', 200n]]);
    expect(hold.totals).toMatchObject({ balance: 1_300n, reserved: 500n, available: 800n });
    const capture = ok(post(hold.wallet, hold.job, { kind: 'capture', amount: 350n, now: T0 }));
    expect(capture.job.shares.map((s) => [s.grantId, s.captured, s.returned])).toEqual([['promo', 300n, 0n], ['paid', 50n, 150n]]);
    expect(capture.postings.map((p) => `${p.type}:${(p.from as { grant: string }).grant}:${p.amount}`)).toEqual([
      'capture:promo:300',
      'capture:paid:50',
      'release_remainder:paid:150',
    ]);
    expect(capture.totals).toMatchObject({ balance: 950n, reserved: 0n, available: 950n, balanceByCategory: { paid: 950n, promotional: 0n } });
    expect(post(capture.wallet, capture.job, { kind: 'release', now: T0 })).toEqual({ ok: false, refusal: { reason: 'hold_already_resolved' } });
  });

  it('refuses a hold beyond available, writing nothing', () => {
    const { wallet } = funded([grant('a')], [100n]);
    expect(post(wallet, NO_FUNDING, { kind: 'hold', amount: 101n, now: T0 })).toEqual({
      ok: false,
      refusal: { reason: 'insufficient_funds', available: 100n, requested: 101n },
    });
  });

  it('a grant funds nothing from its expiry instant on, before its sweep posts; the sweep posts once', () => {
    const { wallet } = funded([grant('soon', { expiresAt: T0 + 1_000n }), grant('later')], [100n, 50n]);
    expect(availableAt(wallet, T0 + 999n)).toBe(150n);
    expect(availableAt(wallet, T0 + 1_000n)).toBe(50n);
    const late = ok(post(wallet, NO_FUNDING, { kind: 'hold', amount: 50n, now: T0 + 1_001n }));
    expect(late.job.shares.map((s) => s.grantId)).toEqual(['later']);
    expect(post(wallet, NO_FUNDING, { kind: 'hold', amount: 51n, now: T0 + 1_001n }).ok).toBe(false);
    expect(post(wallet, NO_FUNDING, { kind: 'expire', grantId: 'soon', now: T0 + 999n })).toMatchObject({ refusal: { reason: 'expiry_not_due' } });
    const swept = ok(post(wallet, NO_FUNDING, { kind: 'expire', grantId: 'soon', now: T0 + 2_000n }));
    expect(swept.postings).toEqual([{ type: 'grant_expiry', flags: 'posted', from: { grant: 'soon' }, to: 'breakage', amount: 100n }]);
    expect(post(swept.wallet, NO_FUNDING, { kind: 'expire', grantId: 'soon', now: T0 + 3_000n })).toMatchObject({ refusal: { reason: 'already_expired' } });
  });

  it('a share held at expiry may still be captured; what it returns leaves at once', () => {
    const { wallet } = funded([grant('soon', { expiresAt: T0 + 1_000n })], [100n]);
    const hold = ok(post(wallet, NO_FUNDING, { kind: 'hold', amount: 80n, now: T0 }));
    const capture = ok(post(hold.wallet, hold.job, { kind: 'capture', amount: 30n, now: T0 + 5_000n }));
    expect(capture.postings.map((p) => `${p.type}:${p.amount}`)).toEqual(['capture:30', 'release_remainder:50', 'grant_expiry:50']);
    expect(capture.totals).toMatchObject({ balance: 20n, available: 0n });
    const sweep = ok(post(capture.wallet, NO_FUNDING, { kind: 'expire', grantId: 'soon', now: T0 + 5_000n }));
    expect(sweep.postings.map((p) => `${p.type}:${p.amount}`)).toEqual(['grant_expiry:20']);
    expect(sweep.wallet.grants[0]).toMatchObject({ remaining: 0n, expiredAmount: 70n });
  });

  it('a charge beyond every grant is debt; money entering pays the debt first', () => {
    const { wallet } = funded([grant('a')], [100n]);
    const hold = ok(post(wallet, NO_FUNDING, { kind: 'hold', amount: 100n, now: T0 }));
    const capture = ok(post(hold.wallet, hold.job, { kind: 'capture', amount: 100n, now: T0 }));
    const up = ok(post(capture.wallet, capture.job, { kind: 'adjustment', version: 1, amount: 40n, now: T0 }));
    expect(up.totals).toMatchObject({ balance: -40n, debt: 40n, available: -40n });
    const topUp = { ...up.wallet, grants: [...up.wallet.grants, grant('b')] };
    const credit = ok(post(topUp, NO_FUNDING, { kind: 'activate', grantId: 'b', amount: 25n, entry: 'credit', now: T0 }));
    expect(credit.postings.map((p) => `${p.type}:${p.amount}`)).toEqual(['credit:25', 'debt_repayment:25']);
    expect(credit.totals).toMatchObject({ balance: -15n, debt: 15n });
  });

  it('a refund to the tenant undoes the latest consumption first, paying the debt first', () => {
    const { wallet } = funded([grant('promo', { category: 'promotional' }), grant('paid')], [60n, 100n]);
    const hold = ok(post(wallet, NO_FUNDING, { kind: 'hold', amount: 100n, now: T0 }));
    const capture = ok(post(hold.wallet, hold.job, { kind: 'capture', amount: 100n, now: T0 }));
    const charge = ok(post(capture.wallet, capture.job, { kind: 'adjustment', version: 1, amount: 80n, now: T0 }));
    expect(charge.job.draws.map((d) => [d.grantId, d.amount])).toEqual([['paid', 60n], [null, 20n]]);
    const refund = ok(post(charge.wallet, charge.job, { kind: 'adjustment', version: 2, amount: -150n, now: T0 }));
    // the debt draw first (20), then paid's draw (60), then the capture's last share (paid 40), then promo (30 of 60)
    expect(refund.job.draws.map((d) => d.refunded)).toEqual([60n, 20n]);
    expect(refund.job.shares.map((s) => [s.grantId, s.refunded])).toEqual([['promo', 30n], ['paid', 40n]]);
    expect(refund.totals).toMatchObject({ balance: 130n, debt: 0n });
    expect(post(refund.wallet, refund.job, { kind: 'adjustment', version: 3, amount: -31n, now: T0 })).toMatchObject({
      refusal: { reason: 'refund_exceeds_consumption', refundable: 30n },
    });
  });

  it("a payer's refund takes the grant's unheld remaining and the rest as debt; a disputed grant funds nothing", () => {
    const { wallet } = funded([grant('card')], [100n]);
    const hold = ok(post(wallet, NO_FUNDING, { kind: 'hold', amount: 70n, now: T0 }));
    const refund = ok(post(hold.wallet, NO_FUNDING, { kind: 'refund', grantId: 'card', amount: 50n, entry: 'refund', now: T0 }));
    expect(refund.postings.map((p) => `${p.type}:${JSON.stringify(p.from)}:${p.amount}`)).toEqual(['refund:{"grant":"card"}:30', 'refund:"debt":20']);
    expect(refund.totals).toMatchObject({ balance: 50n, reserved: 70n, debt: 20n, available: -20n });
    const disputed: WalletFunds = { ...wallet, grants: wallet.grants.map((g) => ({ ...g, disputed: true })) };
    expect(canFund(disputed.grants[0]!, T0)).toBe(false);
    expect(post(disputed, NO_FUNDING, { kind: 'hold', amount: 1n, now: T0 }).ok).toBe(false);
  });
});

// ——— properties ———

const ids = ['g0', 'g1', 'g2', 'g3', 'g4'];
const arbGrant = (id: string) =>
  fc.record({
    category: fc.constantFrom('paid' as const, 'promotional' as const),
    priority: fc.constantFrom(0, 50, 50, 100),
    effectiveAt: fc.bigInt({ min: T0 - 10n, max: T0 }),
    expiresAt: fc.option(fc.bigInt({ min: T0 + 1n, max: T0 + 400n }), { nil: null }),
    createdAt: fc.bigInt({ min: T0 - 10n, max: T0 }),
    amount: fc.bigInt({ min: 0n, max: 1_000n }),
  }).map((f) => ({ grant: grant(id, { ...f }), amount: f.amount }));

type Step =
  | { op: 'hold'; job: number; amount: bigint }
  | { op: 'capture'; job: number; fraction: number }
  | { op: 'release'; job: number }
  | { op: 'adjust'; job: number; amount: bigint }
  | { op: 'expire' | 'void'; grant: number }
  | { op: 'refund'; grant: number; amount: bigint }
  | { op: 'tick'; by: bigint };

const arbStep: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant('hold' as const), job: fc.nat(5), amount: fc.bigInt({ min: 1n, max: 1_500n }) }),
  fc.record({ op: fc.constant('capture' as const), job: fc.nat(5), fraction: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ op: fc.constant('release' as const), job: fc.nat(5) }),
  fc.record({ op: fc.constant('adjust' as const), job: fc.nat(5), amount: fc.bigInt({ min: -800n, max: 800n }) }),
  fc.record({ op: fc.constantFrom('expire' as const, 'void' as const), grant: fc.nat(4) }),
  fc.record({ op: fc.constant('refund' as const), grant: fc.nat(4), amount: fc.bigInt({ min: 1n, max: 500n }) }),
  fc.record({ op: fc.constant('tick' as const), by: fc.bigInt({ min: 1n, max: 150n }) }),
);

describe('posting properties', () => {
  it('conserve money, keep every grant within [0, remaining], follow the draw-down order, and match a replay of their entries', () => {
    fc.assert(
      fc.property(fc.tuple(...ids.map(arbGrant)), fc.array(arbStep, { maxLength: 40 }), (grants, steps) => {
        let { wallet, postings: all } = funded(
          grants.map((g) => g.grant),
          grants.map((g) => g.amount),
        );
        const jobs = new Map<number, JobFunding>();
        let now = T0;
        let version = 0;
        const sweeps = new Map<string, number>();
        for (const step of steps) {
          if (step.op === 'tick') {
            now += step.by;
            continue;
          }
          const intent = intentOf(step, jobs, wallet, now, ++version);
          if (!intent) continue;
          const job = 'job' in step ? (jobs.get(step.job) ?? NO_FUNDING) : NO_FUNDING;
          const before = wallet;
          const result = post(wallet, job, intent);
          if (!result.ok) {
            if (intent.kind === 'hold') expect(intent.amount > availableAt(wallet, now) || job.shares.length > 0).toBe(true);
            continue;
          }
          checkStep(before, result, intent, now);
          if (intent.kind === 'expire') sweeps.set(intent.grantId, (sweeps.get(intent.grantId) ?? 0) + 1);
          wallet = result.wallet;
          if ('job' in step) jobs.set(step.job, result.job);
          all = [...all, ...result.postings];
          // The entries, replayed from nothing, say what the grants and the debt say.
          const replayed = replay(all);
          for (const g of wallet.grants) expect(replayed.grants.get(g.id) ?? { remaining: 0n, held: 0n }).toEqual({ remaining: g.remaining, held: g.held });
          expect(replayed.debt).toBe(wallet.debt);
          // Σ open shares = what the grants hold.
          const openHeld = [...jobs.values()].filter((j) => !j.resolved).reduce((s, j) => s + j.shares.reduce((t, x) => t + x.held, 0n), 0n);
          expect(wallet.grants.reduce((s, g) => s + g.held, 0n)).toBe(openHeld);
        }
        for (const count of sweeps.values()) expect(count).toBe(1);
      }),
      { numRuns: 400 },
    );
  });
});

function intentOf(step: Exclude<Step, { op: 'tick' }>, jobs: Map<number, JobFunding>, wallet: WalletFunds, now: bigint, version: number): Intent | null {
  const job = 'job' in step ? jobs.get(step.job) : undefined;
  switch (step.op) {
    case 'hold':
      return { kind: 'hold', amount: step.amount, now };
    case 'capture': {
      if (!job) return null;
      const held = job.shares.reduce((s, x) => s + x.held, 0n);
      return { kind: 'capture', amount: (held * BigInt(Math.round(step.fraction * 1000))) / 1000n, now };
    }
    case 'release':
      return job ? { kind: 'release', now } : null;
    case 'adjust':
      return job?.resolved ? { kind: 'adjustment', version, amount: step.amount, now } : null;
    case 'expire':
    case 'void':
      return { kind: step.op, grantId: wallet.grants[step.grant]!.id, now };
    case 'refund':
      return { kind: 'refund', grantId: wallet.grants[step.grant]!.id, amount: step.amount, entry: 'refund', now };
  }
}

/** The contract's rule, written again here so the properties do not trust the module's own canFund. */
function fundsAt(g: Grant, now: bigint): boolean {
  const expired = g.expiryPosted || (g.expiresAt !== null && now >= g.expiresAt);
  return g.effectiveAt <= now && !expired && !g.voided && !g.disputed;
}

function walletParty(p: Posting['from']): boolean {
  return p === 'debt' || typeof p === 'object';
}

function checkStep(before: WalletFunds, result: Extract<PostingResult, { ok: true }>, intent: Intent, now: bigint): void {
  const after = result.wallet;
  // Conservation: the wallet's balance moves by exactly what posted entries bring in or take out.
  const balance = (w: WalletFunds) => w.grants.reduce((s, g) => s + g.remaining, 0n) - w.debt;
  let movement = 0n;
  for (const p of result.postings) {
    expect(p.amount > 0n).toBe(true);
    if (p.flags === 'pending' || p.flags === 'void_pending') continue;
    if (p.flags === 'post_pending') movement -= p.amount;
    else movement += (walletParty(p.to) ? p.amount : 0n) - (walletParty(p.from) ? p.amount : 0n);
  }
  expect(balance(after) - balance(before)).toBe(movement);
  // No grant below zero, nothing held beyond what remains, no negative debt.
  for (const g of after.grants) {
    expect(g.held >= 0n && g.remaining >= g.held).toBe(true);
  }
  expect(after.debt >= 0n).toBe(true);
  // Nothing new is funded by a grant that cannot fund at that instant (expired, voided, disputed, not yet effective).
  for (const p of result.postings) {
    const funds = p.type === 'reserve' || (p.type === 'adjustment' && typeof p.from === 'object');
    if (funds) expect(fundsAt(before.grants.find((g) => g.id === (p.from as { grant: string }).grant)!, now)).toBe(true);
  }
  if (intent.kind === 'hold') {
    // Draw-down order: a share on a grant means every grant before it in the order gave all it had unheld.
    const order = before.grants.filter((g) => fundsAt(g, now) && unheld(g) > 0n).sort(drawDownOrder);
    const used = result.job.shares.map((s) => s.grantId);
    expect(used).toEqual(order.slice(0, used.length).map((g) => g.id));
    result.job.shares.slice(0, -1).forEach((s) => expect(s.held).toBe(unheld(order.find((g) => g.id === s.grantId)!)));
    expect(result.totals.available).toBe(availableAt(before, now) - intent.amount);
  }
  if (intent.kind === 'capture' || intent.kind === 'release') {
    for (const s of result.job.shares) expect(s.captured + s.returned).toBe(s.held);
    expect(result.job.shares.reduce((sum, s) => sum + s.captured, 0n)).toBe(intent.kind === 'capture' ? intent.amount : 0n);
  }
  // What reached an expired grant left at once: an expired grant's unheld part is never left to spend.
  for (const g of after.grants) {
    if (!g.voided && !fundsAt(g, now) && g.effectiveAt <= now && !g.disputed && result.postings.some((p) => typeof p.to === 'object' && p.to.grant === g.id)) {
      const prior = before.grants.find((x) => x.id === g.id)!;
      expect(unheld(g)).toBeLessThanOrEqual(unheld(prior));
    }
  }
}
