import type { Queryable } from '../db/pool.js';
import { creditKey } from '../lifecycle/index.js';
import { AmountOutOfRange, MAX_AMOUNT_MICROS, formatAmount } from '../money/index.js';
import type { AccountRow } from './accounts.js';
import { NO_FUNDING, post, walletTotals } from './posting/index.js';
import { insertGrant } from './grants.js';
import { lockWalletFunds } from './wallet-funds.js';
import { applyPosting } from './apply-postings.js';
import { asWalletEntry, entryInstant, type EntryRow, type WalletEntry } from './entries.js';
import { CreditKeyConflict, PostingRefused, WalletNotFound } from './errors.js';
import { enqueueMessage } from '../outbound/enqueue.js';
import { announceGrantCreated } from './grant-events.js';

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
 * A top-up: a paid grant, funding → wallet, posted (and paying the wallet's debt first,
 * as the posting module says). Keyed, so however often it is retried (and whatever
 * happened to the idempotency record) the credit is applied once. The wallet row is
 * locked first — the first lock of this transaction's order, wallet then funding — so a
 * retry of the same key waits for the first and then finds its entry; the entries are
 * inserted with the wallet's projection and running balance (wallet-entries.ts).
 */
export async function creditWallet(tx: Queryable, request: CreditRequest): Promise<CreditResult> {
  const { wallet, amount } = request;
  if (amount <= 0n) throw new RangeError('a credit must be positive');
  const key = creditKey(wallet.tenant_id, request.creditKey);
  const locked = await lockWalletFunds(tx, wallet.id, [], { tenantId: wallet.tenant_id, currency: wallet.currency });
  if (!locked) throw new WalletNotFound(wallet.id);
  const existing = await tx.query<EntryRow>(
    `select *, ${entryInstant()} as created_at_text from ledger_entries where settlement_key = $1 and entry_type = 'credit'`,
    [key],
  );
  const first = existing.rows[0];
  if (first) {
    if (first.credit_account_id !== wallet.id || first.amount !== amount) throw new CreditKeyConflict(key);
    return { entry: asWalletEntry(first, wallet.id), replayed: true };
  }
  const after = walletTotals(locked.funds, locked.now).balance + amount;
  if (after > MAX_AMOUNT_MICROS) throw new AmountOutOfRange("the wallet's balance", formatAmount(after), formatAmount(MAX_AMOUNT_MICROS));
  // A credit is a paid grant: priority 50, no expiry, effective at once (CONTRACT.md "Credit grants").
  const grant = await insertGrant(tx, {
    tenantId: wallet.tenant_id,
    walletId: wallet.id,
    currency: wallet.currency,
    category: 'paid',
    priority: 50,
    amount,
    source: 'credit',
    grantKey: key,
    reference: request.reference ?? null,
  });
  if (!grant) throw new Error(`the grant of credit ${key} was not inserted`);
  const funds = { ...locked.funds, grants: [...locked.funds.grants, grant] };
  // The grant's own instant (just after the lock's): it is effective then, and pays the debt then.
  const posting = post(funds, NO_FUNDING, { kind: 'activate', grantId: grant.id, amount, entry: 'credit', now: grant.effectiveAt });
  if (!posting.ok) throw new PostingRefused(key, posting.refusal);
  const posted = await applyPosting(tx, { ...locked, funds }, posting, { settlementKey: key, reference: request.reference ?? null });
  // The tenant's webhook, in this transaction: only a credit that commits is announced.
  await enqueueMessage(tx, {
    tenantId: wallet.tenant_id,
    type: 'wallet.credited',
    data: {
      wallet_id: wallet.id,
      amount: formatAmount(amount),
      currency: wallet.currency,
      balance: formatAmount(posted.balanceAfter!),
      reference: request.reference ?? null,
    },
  });
  // A credit is a grant like any other: created and active at once.
  await announceGrantCreated(tx, grant.id, true);
  const entry = posted.rows.find((row) => row.entry_type === 'credit')!;
  return { entry: asWalletEntry(entry, wallet.id), replayed: false };
}
