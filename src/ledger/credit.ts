import type { Queryable } from '../db/pool.js';
import { creditKey } from '../lifecycle/index.js';
import { AmountOutOfRange, MAX_AMOUNT_MICROS, formatAmount } from '../money/index.js';
import type { AccountRow } from './accounts.js';
import { systemAccountId } from './accounts.js';
import { asWalletEntry, entryInstant, type EntryRow, type WalletEntry } from './entries.js';
import { CreditKeyConflict, WalletNotFound } from './errors.js';
import { moveProjections, type Transfer } from './transfers.js';
import { enqueueMessage } from '../outbound/enqueue.js';
import { postWalletEntries } from './wallet-entries.js';

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
 * whatever happened to the idempotency record) the credit is applied once. The wallet
 * row is locked first — the first lock of this transaction's order, wallet then funding
 * — so a retry of the same key waits for the first and then finds its entry; the entry
 * is inserted with the wallet's projection and running balance (wallet-entries.ts).
 */
export async function creditWallet(tx: Queryable, request: CreditRequest): Promise<CreditResult> {
  const { wallet, amount } = request;
  if (amount <= 0n) throw new RangeError('a credit must be positive');
  const key = creditKey(wallet.tenant_id, request.creditKey);
  const balance = await lockOwnedWallet(tx, wallet);
  const existing = await tx.query<EntryRow>(
    `select *, ${entryInstant()} as created_at_text from ledger_entries where settlement_key = $1 and entry_type = 'credit'`,
    [key],
  );
  const first = existing.rows[0];
  if (first) {
    if (first.credit_account_id !== wallet.id || first.amount !== amount) throw new CreditKeyConflict(key);
    return { entry: asWalletEntry(first, wallet.id), replayed: true };
  }
  const after = balance + amount;
  if (after > MAX_AMOUNT_MICROS) throw new AmountOutOfRange('the wallet\'s balance', formatAmount(after), formatAmount(MAX_AMOUNT_MICROS));
  const funding = await systemAccountId(tx, wallet.tenant_id, wallet.currency, 'funding');
  const transfer: Transfer = {
    settlementKey: key,
    entryType: 'credit',
    flags: 'posted',
    debitAccountId: funding,
    creditAccountId: wallet.id,
    amount,
    currency: wallet.currency,
    tenantId: wallet.tenant_id,
    reference: request.reference ?? null,
  };
  const posted = await postWalletEntries(tx, wallet.id, [transfer]);
  await moveProjections(tx, [transfer], [wallet.id, funding], new Set([wallet.id]));
  // The tenant's webhook, in this transaction: only a credit that commits is announced.
  await enqueueMessage(tx, {
    tenantId: wallet.tenant_id,
    type: 'wallet.credited',
    data: { wallet_id: wallet.id, amount: formatAmount(amount), currency: wallet.currency, balance: formatAmount(posted!.balance), reference: request.reference ?? null },
  });
  return { entry: asWalletEntry(posted!.rows[0]!, wallet.id), replayed: false };
}

/**
 * Locks the wallet and returns its balance; WalletNotFound unless it is the caller's
 * tenant's, in the caller's currency (the entry debits that tenant's funding account,
 * and a mismatch would move money across tenants). FOR NO KEY UPDATE, the lock the
 * projection's UPDATE takes anyway: FOR UPDATE would conflict with the key-share locks
 * that every concurrent entry's foreign keys hold on the wallet, and deadlock.
 */
async function lockOwnedWallet(tx: Queryable, wallet: CreditRequest['wallet']): Promise<bigint> {
  const result = await tx.query<{ balance: bigint }>(
    `select credits_posted - debits_posted as balance from accounts
     where id = $1 and kind = 'wallet' and tenant_id = $2 and currency = $3 for no key update`,
    [wallet.id, wallet.tenant_id, wallet.currency],
  );
  const row = result.rows[0];
  if (!row) throw new WalletNotFound(wallet.id);
  return row.balance;
}
