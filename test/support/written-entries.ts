import { asWalletEntry, type EntryRow, type WalletEntry } from '../../src/funds/entries.js';
import type { PostingFlags, PostingType } from '../../src/funds/posting/index.js';

/**
 * Every (type, flags, side of the wallet) the posting module writes (funds/posting:
 * job-postings, grant-postings, working); `both`: a debt repayment, grant → the wallet's
 * debt, the wallet's account on both sides.
 */
export const WRITTEN: readonly { type: PostingType; flags: PostingFlags; wallet: 'debit' | 'credit' | 'both' }[] = [
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

export type WrittenShape = (typeof WRITTEN)[number];

/** An entry of that shape as stored, the wallet `wallet` and its counterpart `revenue`. */
export function writtenRow(shape: WrittenShape, amount: bigint): EntryRow {
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

/** The same entry as the wallet's entries list reads it: signed amount and change. */
export function writtenEntry(shape: WrittenShape, amount: bigint): WalletEntry {
  return asWalletEntry(writtenRow(shape, amount), 'wallet');
}
