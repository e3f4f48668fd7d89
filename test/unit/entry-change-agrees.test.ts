import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { availableDelta, POSTING_TYPES, walletDelta } from '../../src/funds/posting/index.js';
import { WRITTEN, writtenEntry, writtenRow } from '../support/written-entries.js';

/**
 * What an entry does to its wallet is defined once, by its flags and accounts
 * (funds/posting walletDelta); the entries list and statements show it beside an amount
 * signed from the wallet's side (funds/entries.ts). The two must tell one story for every
 * entry the posting module writes: the signed amount is what became available or
 * unavailable (a reservation, a release, a posted movement), or for a capture what left
 * the balance; a debt repayment moves neither and shows what the debt went down by.
 */

describe("an entry's change and its signed amount", () => {
  it('the shapes the posting module writes cover every entry type', () => {
    expect(new Set(WRITTEN.map((w) => w.type))).toEqual(new Set(POSTING_TYPES));
  });

  it('the entries list carries the change walletDelta defines, and a signed amount that agrees with it', () => {
    fc.assert(
      fc.property(fc.constantFrom(...WRITTEN), fc.bigInt({ min: 1n, max: 10n ** 18n }), (shape, amount) => {
        const row = writtenRow(shape, amount);
        const entry = writtenEntry(shape, amount);
        expect(entry.change).toEqual(
          walletDelta({ flags: shape.flags, amount, debitAccountId: row.debit_account_id, creditAccountId: row.credit_account_id }, 'wallet'),
        );
        if (shape.type === 'debt_repayment') {
          expect(entry.change).toEqual({ balance: 0n, reserved: 0n });
          expect(entry.amount).toBe(amount);
        } else if (shape.flags === 'post_pending') {
          expect(entry.amount).toBe(entry.change.balance);
          expect(availableDelta(entry.change)).toBe(0n);
        } else {
          expect(entry.amount).toBe(availableDelta(entry.change));
        }
      }),
    );
  });
});
