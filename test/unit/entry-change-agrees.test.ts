import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { walletDelta } from '../../src/funds/posting/index.js';
import { asWalletEntry, type EntryRow } from '../../src/funds/entries.js';
import { availableChange, entryChange } from '../../src/funds/statement.js';
import { ENTRY_TYPES, type EntryFlags, type EntryType } from '../../src/funds/transfers.js';

/**
 * What an entry does to its wallet is said twice, for two readers: by its flags and
 * accounts (funds/posting walletDelta: what the writers move) and by its type and the
 * amount signed from the wallet's side (ledger/statement entryChange: what a statement,
 * the entries list and the CSV show as balance_change and available_change). Every entry
 * the posting module writes (funds/posting: job-postings, grant-postings, working) must
 * get the same answer from both, or the columns would not add up to the balances.
 */

/** Every (type, flags, side of the wallet) the posting module writes; `both`: a debt repayment, grant → debt. */
const WRITTEN: readonly { type: EntryType; flags: EntryFlags; wallet: 'debit' | 'credit' | 'both' }[] = [
  { type: 'credit', flags: 'posted', wallet: 'credit' },
  { type: 'grant', flags: 'posted', wallet: 'credit' },
  { type: 'reserve', flags: 'pending', wallet: 'debit' },
  { type: 'capture', flags: 'post_pending', wallet: 'debit' },
  { type: 'release_remainder', flags: 'void_pending', wallet: 'debit' },
  { type: 'release', flags: 'void_pending', wallet: 'debit' },
  { type: 'adjustment', flags: 'posted', wallet: 'debit' },
  { type: 'adjustment', flags: 'posted', wallet: 'credit' },
  { type: 'debt_repayment', flags: 'posted', wallet: 'both' },
  { type: 'grant_expiry', flags: 'posted', wallet: 'debit' },
  { type: 'grant_void', flags: 'posted', wallet: 'debit' },
  { type: 'refund', flags: 'posted', wallet: 'debit' },
  { type: 'refund_reversal', flags: 'posted', wallet: 'credit' },
  { type: 'dispute_loss', flags: 'posted', wallet: 'debit' },
];

function row(shape: (typeof WRITTEN)[number], amount: bigint): EntryRow {
  return {
    id: 'e1',
    settlement_key: 'k',
    entry_type: shape.type,
    flags: shape.flags,
    debit_account_id: shape.wallet === 'credit' ? 'revenue' : 'wallet',
    credit_account_id: shape.wallet === 'debit' ? 'revenue' : 'wallet',
    amount,
    currency: 'USD',
    job_id: null,
    reference: null,
    grant_id: null,
    created_at: new Date(0),
    wallet_id: 'wallet',
    wallet_seq: 1n,
    balance_after: 0n,
    reserved_after: 0n,
    created_at_text: '1970-01-01T00:00:00.000000Z',
  };
}

describe("an entry's change, by its type and wallet-side amount", () => {
  it('lists every entry type', () => {
    expect(new Set(WRITTEN.map((w) => w.type))).toEqual(new Set(ENTRY_TYPES));
  });

  it('is the change its flags and accounts make (walletDelta), for every entry the posting module writes', () => {
    fc.assert(
      fc.property(fc.constantFrom(...WRITTEN), fc.bigInt({ min: 1n, max: 10n ** 18n }), (shape, amount) => {
        const r = row(shape, amount);
        const entry = asWalletEntry(r, 'wallet');
        const byType = entryChange(entry.entryType, entry.amount);
        const byFlags = walletDelta(
          { flags: shape.flags, amount, debitAccountId: r.debit_account_id, creditAccountId: r.credit_account_id },
          'wallet',
        );
        expect(byType).toEqual(byFlags);
        expect(availableChange(byType)).toBe(byFlags.balance - byFlags.reserved);
      }),
    );
  });
});
