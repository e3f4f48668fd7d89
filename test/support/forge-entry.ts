import type { Pool, Queryable } from '../../src/db/pool.js';
import { withTransaction } from '../../src/db/transaction.js';
import { walletDelta } from '../../src/funds/posting/index.js';
import type { Transfer } from '../../src/funds/transfers.js';
import { newId } from '../../src/ids.js';

/** An entry no Tally path writes (a forgery, or what a bug would leave), in the writer's own shape. */
export type ForgedEntry = Omit<Transfer, 'reference'>;

/**
 * Inserts a forged entry placed in its wallet's order, as the database requires of every
 * entry of a wallet since migration 0031: the wallet's head moves by what walletDelta says
 * the entry does (and nothing else moves: no projection, no grant), as the placing
 * trigger of 0009–0019 did for entries inserted by hand. The credited side is the wallet
 * when both are. Returns the entry's id.
 */
export async function forgeEntryIn(tx: Queryable, entry: ForgedEntry): Promise<string> {
  const id = newId();
  const wallets = await tx.query<{ id: string }>(
    `select id from accounts where kind = 'wallet' and id in ($1, $2) order by id = $2 desc limit 1 for no key update`,
    [entry.debitAccountId, entry.creditAccountId],
  );
  const wallet = wallets.rows[0]?.id ?? null;
  const change = wallet
    ? walletDelta(
        { flags: entry.flags, amount: entry.amount, debitAccountId: entry.debitAccountId, creditAccountId: entry.creditAccountId },
        wallet,
      )
    : null;
  const head = wallet
    ? (
        await tx.query<{ entry_seq: bigint; running_balance: bigint; running_reserved: bigint }>(
          `update accounts set entry_seq = entry_seq + 1, running_balance = running_balance + $2, running_reserved = running_reserved + $3,
                               last_entry_at = greatest(clock_timestamp(), last_entry_at)
           where id = $1 returning entry_seq, running_balance, running_reserved`,
          [wallet, change!.balance.toString(), change!.reserved.toString()],
        )
      ).rows[0]!
    : null;
  await tx.query(
    `insert into ledger_entries (id, settlement_key, entry_type, flags, pending_id, debit_account_id, credit_account_id, amount, currency,
                                 tenant_id, job_id, grant_id, wallet_id, wallet_seq, balance_after, reserved_after, created_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, coalesce((select last_entry_at from accounts where id = $13), clock_timestamp()))`,
    [
      id,
      entry.settlementKey,
      entry.entryType,
      entry.flags,
      entry.pendingId ?? null,
      entry.debitAccountId,
      entry.creditAccountId,
      entry.amount.toString(),
      entry.currency,
      entry.tenantId,
      entry.jobId ?? null,
      entry.grantId ?? null,
      wallet,
      head?.entry_seq ?? null,
      head?.running_balance ?? null,
      head?.running_reserved ?? null,
    ],
  );
  return id;
}

/** forgeEntryIn, in a transaction of its own. */
export function forgeEntry(pool: Pool, entry: ForgedEntry): Promise<string> {
  return withTransaction(pool, (tx) => forgeEntryIn(tx, entry));
}
