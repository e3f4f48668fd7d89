import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { projectionDelta, walletDelta, type EntryShape } from '../../src/funds/posting/index.js';

const entryArb: fc.Arbitrary<EntryShape & { walletSide: 'debit' | 'credit' | 'both' }> = fc
  .record({
    flags: fc.constantFrom('posted', 'pending', 'post_pending', 'void_pending' as const),
    amount: fc.bigInt({ min: 1n, max: 10n ** 18n }),
    walletSide: fc.constantFrom('debit', 'credit', 'both' as const),
  })
  .map((e) => ({
    ...e,
    // a debt repayment ('both') is a posted entry between two parties of one wallet
    flags: e.walletSide === 'both' ? 'posted' : e.flags,
    debitAccountId: e.walletSide === 'credit' ? 'revenue' : 'wallet',
    creditAccountId: e.walletSide === 'debit' ? 'revenue' : 'wallet',
  }));

describe("an entry's effects", () => {
  it('conserve money: what the debited account loses the credited one gains, pending and posted alike', () => {
    fc.assert(
      fc.property(entryArb, (entry) => {
        const { debit, credit } = projectionDelta(entry);
        expect(credit.creditsPosted).toBe(debit.debitsPosted);
        expect(credit.creditsPending).toBe(debit.debitsPending);
      }),
    );
  });

  it("move a wallet's balance and reserved exactly as they move its projection (balance = credits − debits posted, reserved = debits pending)", () => {
    fc.assert(
      fc.property(entryArb, (entry) => {
        const { debit, credit } = projectionDelta(entry);
        const sides = [entry.debitAccountId === 'wallet' ? debit : null, entry.creditAccountId === 'wallet' ? credit : null];
        let balance = 0n;
        let reserved = 0n;
        for (const side of sides) {
          if (!side) continue;
          balance += side.creditsPosted - side.debitsPosted;
          reserved += side.debitsPending;
        }
        expect(walletDelta(entry, 'wallet')).toEqual({ balance, reserved });
      }),
    );
  });

  it('a debt repayment moves neither', () => {
    expect(walletDelta({ flags: 'posted', amount: 5n, debitAccountId: 'w', creditAccountId: 'w' }, 'w')).toEqual({
      balance: 0n,
      reserved: 0n,
    });
  });
});
