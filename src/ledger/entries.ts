import type { Queryable } from '../db/pool.js';

export interface EntryRow {
  id: string;
  settlement_key: string;
  entry_type: string;
  flags: string;
  debit_account_id: string;
  credit_account_id: string;
  amount: bigint;
  currency: string;
  job_id: string | null;
  reference: string | null;
  created_at: Date;
}

/**
 * An entry as a wallet sees it: money towards the wallet positive, away from it
 * negative. A void (`release`, `release_remainder`) is booked against the same
 * accounts as the reservation it voids, but it gives the held money back, so it is
 * positive. Sums that mean something: balance = credit + capture + adjustment
 * entries; available = credit + reserve + release + release_remainder + adjustment.
 */
export interface WalletEntry {
  id: string;
  entryType: string;
  amount: bigint;
  settlementKey: string;
  jobId: string | null;
  reference: string | null;
  createdAt: Date;
}

export function asWalletEntry(row: EntryRow, walletId: string): WalletEntry {
  return {
    id: row.id,
    entryType: row.entry_type,
    amount: (row.credit_account_id === walletId) !== (row.flags === 'void_pending') ? row.amount : -row.amount,
    settlementKey: row.settlement_key,
    jobId: row.job_id,
    reference: row.reference,
    createdAt: row.created_at,
  };
}

/** Newest first; `before` is the id of the last entry of the previous page (UUIDv7 sorts by time). */
export async function listWalletEntries(db: Queryable, walletId: string, limit: number, before: string | null): Promise<WalletEntry[]> {
  const result = await db.query<EntryRow>(
    `select * from (
       select * from ledger_entries where debit_account_id = $1 and ($3::uuid is null or id < $3)
       union all
       select * from ledger_entries where credit_account_id = $1 and ($3::uuid is null or id < $3)
     ) e order by id desc limit $2`,
    [walletId, limit, before],
  );
  return result.rows.map((row) => asWalletEntry(row, walletId));
}
