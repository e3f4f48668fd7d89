import type { Queryable } from '../db/pool.js';
import { newId } from '../ids.js';
import { creditKey } from '../lifecycle/index.js';
import { AmountOutOfRange, MAX_AMOUNT_MICROS, formatAmount } from '../money/index.js';
import type { AccountRow } from './accounts.js';
import { systemAccountId } from './accounts.js';
import { asWalletEntry, type EntryRow, type WalletEntry } from './entries.js';
import { CreditKeyConflict, WalletNotFound } from './errors.js';
import { moveProjections, type Transfer } from './transfers.js';

/**
 * The API route that tops up a wallet. Its idempotency records are kept for ever (the
 * idempotency cleanup skips this route): a credit's ledger key derives from its
 * Idempotency-Key, so a retry years later must still find the first answer.
 */
export const CREDIT_ROUTE = '/v1/wallets/:id/credits';

export interface CreditRequest {
  wallet: Pick<AccountRow, 'id' | 'tenant_id' | 'currency'>;
  amount: bigint;
  /** Stable for every retry of this top-up (derived from its Idempotency-Key). */
  creditKey: string;
  reference?: string | null;
}

export interface CreditResult {
  entry: WalletEntry;
  /** true when this key was applied before and nothing was written now */
  replayed: boolean;
}

/**
 * A top-up: funding → wallet, posted. Keyed, so however often it is retried (and
 * whatever happened to the idempotency record) the credit is applied once. The
 * unique (settlement_key, entry_type) is the intended constraint here.
 */
export async function creditWallet(tx: Queryable, request: CreditRequest): Promise<CreditResult> {
  const { wallet, amount } = request;
  if (amount <= 0n) throw new RangeError('a credit must be positive');
  const key = creditKey(wallet.tenant_id, request.creditKey);
  // The caller's tenant and currency must be the wallet's own: the entry debits that
  // tenant's funding account, and a mismatch would move money across tenants.
  const owned = await tx.query(`select 1 from accounts where id = $1 and kind = 'wallet' and tenant_id = $2 and currency = $3`, [
    wallet.id,
    wallet.tenant_id,
    wallet.currency,
  ]);
  if (owned.rowCount === 0) throw new WalletNotFound(wallet.id);
  const funding = await systemAccountId(tx, wallet.tenant_id, wallet.currency, 'funding');
  const inserted = await tx.query<EntryRow>(
    `insert into ledger_entries (id, settlement_key, entry_type, flags, debit_account_id, credit_account_id, amount, currency, tenant_id, reference)
     values ($1, $2, 'credit', 'posted', $3, $4, $5, $6, $7, $8)
     on conflict on constraint ledger_entries_settlement_key_entry_type_key do nothing
     returning *`,
    [newId(), key, funding, wallet.id, amount.toString(), wallet.currency, wallet.tenant_id, request.reference ?? null],
  );
  const row = inserted.rows[0];
  if (row) {
    await refuseBalanceBeyondRange(tx, wallet.id, amount);
    const transfer: Transfer = {
      settlementKey: key,
      entryType: 'credit',
      flags: 'posted',
      debitAccountId: funding,
      creditAccountId: wallet.id,
      amount,
      currency: wallet.currency,
      tenantId: wallet.tenant_id,
    };
    await moveProjections(tx, [transfer], [wallet.id, funding]);
    return { entry: asWalletEntry(row, wallet.id), replayed: false };
  }
  const existing = await tx.query<EntryRow>(
    `select * from ledger_entries where settlement_key = $1 and entry_type = 'credit'`,
    [key],
  );
  const first = existing.rows[0];
  if (!first || first.credit_account_id !== wallet.id || first.amount !== amount) throw new CreditKeyConflict(key);
  return { entry: asWalletEntry(first, wallet.id), replayed: true };
}

/**
 * A balance must stay within the range of amounts (CONTRACT "Money"). The wallet row is
 * locked here — the first lock of this transaction's order, wallet then funding — so
 * concurrent credits check one after another. FOR NO KEY UPDATE, the lock the projection's
 * UPDATE takes anyway: FOR UPDATE would conflict with the key-share locks that every
 * concurrent entry's foreign keys hold on the wallet, and deadlock.
 */
async function refuseBalanceBeyondRange(tx: Queryable, walletId: string, amount: bigint): Promise<void> {
  const result = await tx.query<{ balance: bigint }>(
    `select credits_posted - debits_posted as balance from accounts where id = $1 for no key update`,
    [walletId],
  );
  const after = result.rows[0]!.balance + amount;
  if (after > MAX_AMOUNT_MICROS) throw new AmountOutOfRange('the wallet\'s balance', formatAmount(after), formatAmount(MAX_AMOUNT_MICROS));
}
