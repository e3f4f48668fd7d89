import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replay, type Posting } from '../../src/funds/posting/index.js';
import { allocationFaults } from '../../src/reconcile/checks/allocations.js';
import { GrantReplay, entryPostings, unnamedPostings, type GrantEntry } from '../../src/reconcile/checks/grant-history.js';

/**
 * What grant_drift makes of a grant's rows (src/reconcile/checks/grant-history.ts) and what
 * allocation_mismatch makes of a hold's shares, without a database.
 */

const G = 'grant-1';

function entry(fields: Partial<GrantEntry> & Pick<GrantEntry, 'entryType' | 'flags' | 'amount'>): GrantEntry {
  return { inbound: false, resolvesUnnamed: false, ...fields };
}

function history(opening: bigint, entries: GrantEntry[], open: Parameters<typeof unnamedPostings>[2] = []) {
  const grant = new GrantReplay(G);
  grant.add(unnamedPostings(G, opening, open));
  for (const e of entries) grant.add(entryPostings(G, e));
  return grant.result();
}

describe('a grant replayed from its rows', () => {
  it('money in and out, a hold captured in part: remaining and held as the writers left them', () => {
    expect(
      history(0n, [
        entry({ entryType: 'grant', flags: 'posted', amount: 10_000n, inbound: true }),
        entry({ entryType: 'reserve', flags: 'pending', amount: 4_000n }),
        entry({ entryType: 'capture', flags: 'post_pending', amount: 1_500n }),
        entry({ entryType: 'release_remainder', flags: 'void_pending', amount: 2_500n }),
        entry({ entryType: 'reserve', flags: 'pending', amount: 1_000n }),
        entry({ entryType: 'adjustment', flags: 'posted', amount: 200n }),
        entry({ entryType: 'adjustment', flags: 'posted', amount: 50n, inbound: true }),
        entry({ entryType: 'debt_repayment', flags: 'posted', amount: 300n, inbound: true }),
        entry({ entryType: 'grant_expiry', flags: 'posted', amount: 7_000n }),
      ]),
    ).toEqual({ remaining: 10_000n - 1_500n - 200n + 50n - 300n - 7_000n, held: 1_000n });
  });

  it("a wallet's balance from before grants is its opening; a hold from then still open holds on it by its share", () => {
    expect(history(9_000n, [], [{ held: 3_000n, captured: 0n, returned: 0n, unnamedReserve: true }])).toEqual({
      remaining: 9_000n,
      held: 3_000n,
    });
  });

  it('a hold from before grants captured since: its capture and release name the grant, its reserve does not', () => {
    expect(
      history(9_000n, [
        entry({ entryType: 'capture', flags: 'post_pending', amount: 1_000n, resolvesUnnamed: true }),
        entry({ entryType: 'release_remainder', flags: 'void_pending', amount: 2_000n, resolvesUnnamed: true }),
      ]),
    ).toEqual({ remaining: 8_000n, held: 0n });
  });

  it("an open share whose reserve names the grant is the entries' to count, not counted twice", () => {
    expect(
      history(
        0n,
        [entry({ entryType: 'reserve', flags: 'pending', amount: 700n })],
        [{ held: 700n, captured: 0n, returned: 0n, unnamedReserve: false }],
      ),
    ).toEqual({ remaining: 0n, held: 700n });
  });

  it('replaying as it streams, carrying what was replayed, is replaying everything at once', () => {
    const postingArb: fc.Arbitrary<Posting> = fc
      .record({
        flags: fc.constantFrom('posted', 'pending', 'post_pending', 'void_pending' as const),
        inbound: fc.boolean(),
        amount: fc.bigInt({ min: 1n, max: 1_000_000n }),
      })
      .map(({ flags, inbound, amount }) =>
        flags === 'posted' && inbound
          ? { type: 'credit', flags, from: 'funding', to: { grant: G }, amount }
          : { type: 'reserve', flags, from: { grant: G }, to: 'revenue', amount },
      );
    fc.assert(
      fc.property(fc.array(postingArb, { maxLength: 200 }), fc.integer({ min: 1, max: 20 }), (postings, carryAfter) => {
        const streamed = new GrantReplay(G, carryAfter);
        for (const p of postings) streamed.add([p]);
        expect(streamed.result()).toEqual(replay(postings).grants.get(G) ?? { remaining: 0n, held: 0n });
      }),
    );
  });
});

describe('allocationFaults', () => {
  const shares = [
    { held: 5_000n, captured: 1_800n, returned: 3_200n },
    { held: 3_000n, captured: 0n, returned: 3_000n },
  ];

  it('none when the shares are the hold: held, and once resolved captured and returned', () => {
    expect(allocationFaults({ amount: 8_000n, posted: 1_800n, voided: 6_200n }, shares)).toEqual([]);
    expect(
      allocationFaults(
        { amount: 8_000n, posted: null, voided: null },
        shares.map((s) => ({ ...s, captured: 0n, returned: 0n })),
      ),
    ).toEqual([]);
    expect(allocationFaults({ amount: 0n, posted: 0n, voided: 0n }, [])).toEqual([]);
  });

  it('names each disagreement', () => {
    expect(allocationFaults({ amount: 8_001n, posted: 1_800n, voided: 6_200n }, shares)).toEqual(['held']);
    expect(allocationFaults({ amount: 8_000n, posted: 1_801n, voided: 6_199n }, shares)).toEqual(['captured', 'returned']);
    expect(allocationFaults({ amount: 8_000n, posted: null, voided: null }, shares)).toEqual(['moved_while_open']);
  });
});
