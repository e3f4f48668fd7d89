import { walletDelta, type PostingFlags, type PostingType, type WalletChange } from './posting/index.js';

export interface EntryRow {
  id: string;
  settlement_key: string;
  entry_type: PostingType;
  flags: PostingFlags;
  debit_account_id: string;
  credit_account_id: string;
  amount: bigint;
  currency: string;
  job_id: string | null;
  reference: string | null;
  grant_id: string | null;
  created_at: Date;
  /** the wallet whose order the entry is in, its number there, and the wallet's holdings after it (migrations/0009) */
  wallet_id: string | null;
  wallet_seq: bigint | null;
  balance_after: bigint | null;
  reserved_after: bigint | null;
  /** created_at to the microsecond (ENTRY_INSTANT): selected beside the row where a wallet's entries are read */
  created_at_text: string;
}

/**
 * An entry's instant as RFC 3339 in UTC with microseconds, the ledger clock's precision:
 * a JavaScript Date keeps milliseconds, and an instant rounded down would put the
 * balance "at" an entry's own time before the entry.
 */
export function entryInstant(column = 'created_at'): string {
  return `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/**
 * An entry as a wallet sees it: money towards the wallet positive, away from it
 * negative. A void (`release`, `release_remainder`) is booked against the same
 * accounts as the reservation it voids, but it gives the held money back, so it is
 * positive. Amounts of different types do not add up to one thing (a reservation moves
 * what is available, a capture the balance, a debt repayment neither): what an entry
 * does to the balance and the reserved amount is `change` (the posting module's
 * walletDelta), and those changes are what add up. With the wallet's holdings right
 * after it (its running balance and reserved amount).
 */
export interface WalletEntry {
  id: string;
  entryType: PostingType;
  amount: bigint;
  /** what it did to the wallet's balance and reserved amount */
  change: WalletChange;
  settlementKey: string;
  jobId: string | null;
  reference: string | null;
  /** the grant it moves (null: the wallet's debt, or an entry from before grants) */
  grantId: string | null;
  createdAt: string;
  sequence: bigint;
  balanceAfter: bigint;
  reservedAfter: bigint;
}

export function asWalletEntry(row: EntryRow, walletId: string): WalletEntry {
  if (row.wallet_id !== walletId || row.wallet_seq === null || row.balance_after === null || row.reserved_after === null) {
    throw new Error(`entry ${row.id} is not in the order of wallet ${walletId}`);
  }
  return {
    id: row.id,
    entryType: row.entry_type,
    amount: walletSideAmount(row, walletId),
    change: walletDelta(
      { flags: row.flags, amount: row.amount, debitAccountId: row.debit_account_id, creditAccountId: row.credit_account_id },
      walletId,
    ),
    settlementKey: row.settlement_key,
    jobId: row.job_id,
    reference: row.reference,
    grantId: row.grant_id,
    createdAt: row.created_at_text,
    sequence: row.wallet_seq,
    balanceAfter: row.balance_after,
    reservedAfter: row.reserved_after,
  };
}

/**
 * Signed from the wallet's side. A debt repayment moves money between two parties of the
 * wallet (a grant pays its debt): the wallet as a whole neither gains nor loses, so it
 * shows the amount the debt went down by, positive, and moves no balance.
 */
function walletSideAmount(row: EntryRow, walletId: string): bigint {
  if (row.entry_type === 'debt_repayment') return row.amount;
  return (row.credit_account_id === walletId) !== (row.flags === 'void_pending') ? row.amount : -row.amount;
}
