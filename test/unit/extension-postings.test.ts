import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  NO_FUNDING,
  post,
  replay,
  type JobFunding,
} from '../../src/funds/posting/index.js';
import { decide, growByRequest, type JobView } from '../../src/lifecycle/index.js';
import type { PriceBook } from '../../src/pricing/index.js';
import { T0, funded, grantFixture, ok } from '../support/grant-fixture.js';

/**
 * Hold extensions in the kernel (funds/posting: postExtension and the capture that
 * consumes them) and in the lifecycle (growth.ts through decide()): hand-computed cases and
 * properties — captured + released = reserved, per share and in total; a capture consumes
 * the first hold's shares, then each extension's pieces by version, then what was held
 * against the debt; the entries replayed say what the grants and the debt say; an
 * extension never lowers a limit and numbers itself 1, 2, … without gaps.
 */


const heldOf = (job: JobFunding) =>
  job.shares.reduce((s, x) => s + x.held, 0n) + job.pieces.reduce((s, p) => (p.grantId === null ? s + p.amount : s), 0n);

describe('extensions in the kernel, hand computed', () => {
  it('adds each grant part to its share, keeps the pieces, and a capture consumes the first hold, then extension 1, then 2', () => {
    // a (priority 10) has 100, b has 1000: the hold takes a then b; a's money comes back
    // through another job's release, so extension 1 finds a again before b.
    const { wallet } = funded([grantFixture('a', { priority: 10 }), grantFixture('b')], [100n, 1_000n]);
    const other = ok(post(wallet, NO_FUNDING, { kind: 'hold', amount: 60n, now: T0 }));
    const hold = ok(post(other.wallet, NO_FUNDING, { kind: 'hold', amount: 100n, now: T0 }));
    expect(hold.job.shares.map((s) => [s.grantId, s.held])).toEqual([
      ['a', 40n],
      ['b', 60n],
    ]);
    const freed = ok(post(hold.wallet, other.job, { kind: 'release', now: T0 }));
    const ext1 = ok(post(freed.wallet, hold.job, { kind: 'extension', version: 1, amount: 80n, mayOwe: false, now: T0 }));
    expect(ext1.job.shares.map((s) => [s.grantId, s.held])).toEqual([
      ['a', 100n],
      ['b', 80n],
    ]);
    expect(ext1.job.pieces).toEqual([
      { version: 1, grantId: 'a', amount: 60n },
      { version: 1, grantId: 'b', amount: 20n },
    ]);
    expect(ext1.postings.map((p) => `${p.type}:${p.flags}:${(p.from as { grant: string }).grant}:${p.amount}`)).toEqual([
      'reserve:pending:a:60',
      'reserve:pending:b:20',
    ]);
    // 120 consumed in allocation order: a's 40 and b's 60 (the first hold), then a's 20 of extension 1
    const capture = ok(post(ext1.wallet, ext1.job, { kind: 'capture', amount: 120n, now: T0 }));
    expect(capture.job.shares.map((s) => [s.grantId, s.captured, s.returned])).toEqual([
      ['a', 60n, 40n],
      ['b', 60n, 20n],
    ]);
    expect(capture.totals).toMatchObject({ reserved: 0n, balance: 980n });
  });

  it("refuses a report's extension beyond available; a terminal event's holds the rest against the debt, captured last as debt", () => {
    const { wallet } = funded([grantFixture('a')], [150n]);
    const hold = ok(post(wallet, NO_FUNDING, { kind: 'hold', amount: 100n, now: T0 }));
    expect(post(hold.wallet, hold.job, { kind: 'extension', version: 1, amount: 51n, mayOwe: false, now: T0 })).toEqual({
      ok: false,
      refusal: { reason: 'insufficient_funds', available: 50n, requested: 51n },
    });
    const ext = ok(post(hold.wallet, hold.job, { kind: 'extension', version: 1, amount: 300n, mayOwe: true, now: T0 }));
    expect(ext.job.pieces).toEqual([
      { version: 1, grantId: 'a', amount: 50n },
      { version: 1, grantId: null, amount: 250n },
    ]);
    // the grants hold their 150; the 250 held against the debt is in the wallet's entries (reserved), and posts as debt
    expect(ext.totals).toMatchObject({ balance: 150n, reserved: 150n, available: 0n });
    expect(ext.postings.map((p) => `${p.type}:${p.flags}:${typeof p.from === 'object' ? p.from.grant : p.from}:${p.amount}`)).toEqual([
      'reserve:pending:a:50',
      'reserve:pending:debt:250',
    ]);
    const capture = ok(post(ext.wallet, ext.job, { kind: 'capture', amount: 370n, now: T0 }));
    expect(capture.job.shares.map((s) => [s.captured, s.returned])).toEqual([[150n, 0n]]);
    expect(capture.job.draws).toEqual([{ version: 0, grantId: null, amount: 220n, refunded: 0n }]);
    expect(capture.totals).toMatchObject({ balance: -220n, reserved: 0n, debt: 220n });
    // a later correction refunds the debt part first (latest consumption first)
    const refund = ok(post(capture.wallet, capture.job, { kind: 'adjustment', version: 1, amount: -230n, now: T0 }));
    expect(refund.totals).toMatchObject({ debt: 0n, balance: 10n });
    expect(refund.job.shares[0]!.refunded).toBe(10n);
  });
});

const GRANT_IDS = ['g1', 'g2', 'g3'] as const;

describe('extension properties', () => {
  it('captured + released = reserved per share and in total, consumption follows allocation, replay agrees', () => {
    const arb = fc.record({
      amounts: fc.tuple(...GRANT_IDS.map(() => fc.bigInt({ min: 0n, max: 1_000n }))),
      priorities: fc.tuple(...GRANT_IDS.map(() => fc.integer({ min: 0, max: 3 }))),
      first: fc.bigInt({ min: 1n, max: 800n }),
      extensions: fc.array(fc.record({ amount: fc.bigInt({ min: 1n, max: 600n }), mayOwe: fc.boolean() }), { maxLength: 6 }),
      fraction: fc.integer({ min: 0, max: 1000 }),
      release: fc.boolean(),
    });
    fc.assert(
      fc.property(arb, ({ amounts, priorities, first, extensions, fraction, release }) => {
        const grants = GRANT_IDS.map((id, i) => grantFixture(id, { priority: priorities[i]! * 10 }));
        let { wallet, postings } = funded(grants, [...amounts]);
        const hold = post(wallet, NO_FUNDING, { kind: 'hold', amount: first, now: T0 });
        if (!hold.ok) return;
        wallet = hold.wallet;
        let job = hold.job;
        postings = [...postings, ...hold.postings];
        // the allocation in order: the first hold's shares, then each extension's pieces
        const allocation: { grantId: string | null; amount: bigint }[] = job.shares.map((s) => ({ grantId: s.grantId, amount: s.held }));
        let reserved = first;
        let version = 0;
        for (const x of extensions) {
          // only a terminal event's extension may owe, and it is the last before the capture
          const mayOwe = x.mayOwe && x === extensions.at(-1);
          const result = post(wallet, job, { kind: 'extension', version: version + 1, amount: x.amount, mayOwe, now: T0 });
          if (!result.ok) {
            expect(mayOwe).toBe(false);
            continue;
          }
          version++;
          expect(result.job.pieces.filter((p) => p.version === version).reduce((s, p) => s + p.amount, 0n)).toBe(x.amount);
          allocation.push(...result.job.pieces.filter((p) => p.version === version));
          wallet = result.wallet;
          job = result.job;
          reserved += x.amount;
          postings = [...postings, ...result.postings];
          expect(heldOf(job)).toBe(reserved);
        }
        const amount = release ? 0n : (reserved * BigInt(fraction)) / 1000n;
        const resolved = ok(post(wallet, job, release ? { kind: 'release', now: T0 } : { kind: 'capture', amount, now: T0 }));
        postings = [...postings, ...resolved.postings];
        const captured = resolved.job.shares.reduce((s, x) => s + x.captured, 0n) + resolved.job.draws.reduce((s, d) => s + d.amount, 0n);
        const returned = resolved.job.shares.reduce((s, x) => s + x.returned, 0n);
        const owedBack =
          allocation.filter((p) => p.grantId === null).reduce((s, p) => s + p.amount, 0n) -
          resolved.job.draws.reduce((s, d) => s + d.amount, 0n);
        expect(captured).toBe(amount);
        expect(captured + returned + owedBack).toBe(reserved);
        for (const s of resolved.job.shares) expect(s.captured + s.returned).toBe(s.held);
        // consumption in allocation order: walk it and compare per grant
        const expected = new Map<string | null, bigint>();
        let left = amount;
        for (const piece of allocation) {
          const take = piece.amount < left ? piece.amount : left;
          expected.set(piece.grantId, (expected.get(piece.grantId) ?? 0n) + take);
          left -= take;
        }
        for (const s of resolved.job.shares) expect(s.captured).toBe(expected.get(s.grantId) ?? 0n);
        expect(resolved.totals.reserved).toBe(0n);
        const replayed = replay(postings);
        for (const g of resolved.wallet.grants)
          expect(replayed.grants.get(g.id) ?? { remaining: 0n, held: 0n }).toEqual({ remaining: g.remaining, held: g.held });
        expect(replayed.debt).toBe(resolved.wallet.debt);
      }),
      { numRuns: 500 },
    );
  });
});

/** 1.000000 per unit of gpu_seconds (per million: 10^12 micros), as the e2e tests price it. */
const BOOK: PriceBook = {
  id: 'pb',
  model: 'm',
  currency: 'USD',
  version: 1,
  unitPrices: { gpu_seconds: 1_000_000_000_000n },
} as unknown as PriceBook;

function running(fields: Partial<JobView> = {}): JobView {
  return {
    id: 'job',
    tenantId: 'tenant',
    state: 'running',
    reserved: 100_000_000n,
    captured: null,
    adjusted: 0n,
    highestCorrection: 0,
    priceBook: BOOK,
    limits: { gpu_seconds: 100 },
    autoExtend: { step: { gpu_seconds: 100 }, maxLimits: { gpu_seconds: 1_000 } },
    usageSoFar: null,
    extensionCount: 0,
    holdExhausted: null,
    exhaustedAnnounced: null,
    ...fields,
  };
}

const POLICY = { failedWithUsage: 'release', cancelGraceSeconds: 300, holdTtlSeconds: 86_400 } as const;

describe('growth through decide()', () => {
  it('a series of reports extends in whole steps, numbered without gaps, never lowering limits; exhausted is announced once per reserved', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1_200 }), { minLength: 1, maxLength: 30 }), (reports) => {
        let job = running();
        let announced = 0;
        const reservedAnnounced = new Set<bigint>();
        for (const gpu of reports) {
          const decision = decide(job, { type: 'job.progress', usage: { gpu_seconds: gpu } }, POLICY);
          const extensions = decision.intents.filter((i) => i.kind === 'extension');
          expect(extensions.length).toBeLessThanOrEqual(1);
          expect(decision.intents.every((i) => i.kind === 'extension')).toBe(true);
          const g = decision.growth;
          expect(g.limits.gpu_seconds!).toBeGreaterThanOrEqual(job.limits!.gpu_seconds!);
          expect(g.limits.gpu_seconds!).toBeLessThanOrEqual(1_000);
          expect((g.limits.gpu_seconds! - 100) % 100 === 0 || g.limits.gpu_seconds === 1_000).toBe(true);
          expect(g.reserved).toBe(BigInt(g.limits.gpu_seconds!) * 1_000_000n);
          if (extensions[0])
            expect(extensions[0]).toMatchObject({ version: (job.extensionCount ?? 0) + 1, amount: g.reserved - job.reserved });
          if (g.announceExhausted) {
            announced++;
            expect(reservedAnnounced.has(g.holdExhausted!.reserved)).toBe(false);
            reservedAnnounced.add(g.holdExhausted!.reserved);
          }
          const capped = (g.usageSoFar!.gpu_seconds ?? 0) + 100 > g.limits.gpu_seconds!;
          expect(g.holdExhausted === null).toBe(!capped);
          job = {
            ...job,
            state: decision.nextState,
            reserved: g.reserved,
            limits: g.limits,
            usageSoFar: g.usageSoFar,
            extensionCount: g.extensionCount,
            holdExhausted: g.holdExhausted,
            exhaustedAnnounced: g.announceExhausted ? g.holdExhausted!.reserved : job.exhaustedAnnounced,
          };
        }
        expect(announced).toBeLessThanOrEqual(1); // the cap is one reserved value: at most one announcement
      }),
      { numRuns: 300 },
    );
  });

  it("a completion's extension comes first and the capture bills from the grown hold; never two terminal intents", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2_000 }), fc.constantFrom('job.completed', 'job.canceled'), (gpu, type) => {
        const decision = decide(running(), { type, usage: { gpu_seconds: gpu } } as never, POLICY);
        const kinds = decision.intents.map((i) => i.kind);
        expect(kinds.filter((k) => k === 'capture' || k === 'release')).toHaveLength(1);
        const grown = Math.min(1_000, Math.max(100, Math.ceil(gpu / 100) * 100));
        expect(kinds).toEqual(grown > 100 ? ['extension', 'capture'] : ['capture']);
        const capture = decision.intents.find((i) => i.kind === 'capture')!;
        expect(capture.amount).toBe(BigInt(Math.min(gpu, grown)) * 1_000_000n);
        expect(decision.totals.captured! + decision.totals.released!).toBe(BigInt(grown) * 1_000_000n);
        const extension = decision.intents.find((i) => i.kind === 'extension');
        if (extension) expect(extension.posting).toMatchObject({ mayOwe: true });
      }),
    );
  });

  it("a release never extends; a tenant's extension grows the limits by add, beyond max_limits", () => {
    expect(decide(running(), { type: 'job.failed', usage: { gpu_seconds: 900 } }, POLICY).intents.map((i) => i.kind)).toEqual(['release']);
    const { extension, growth } = growByRequest(running({ limits: { gpu_seconds: 950 }, reserved: 950_000_000n }), { gpu_seconds: 200 });
    expect(growth.limits).toEqual({ gpu_seconds: 1_150 });
    expect(extension).toMatchObject({ version: 1, amount: 200_000_000n, source: 'api', mayOwe: false });
  });
});
