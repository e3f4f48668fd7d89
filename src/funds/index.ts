/**
 * funds/: a wallet's money — accounts, grants, entries, credits, thresholds, spend limits,
 * statements (docs/ARCHITECTURE.md, the folders of src/). The door: the rest of src/,
 * ledger/ included, imports funds/ only through this file and its two subfolders' own doors,
 * posting/index.ts (the pure posting module) and payments/index.ts (Stripe)
 * (.dependency-cruiser.cjs, doors-only-*). Files inside funds/ import each other directly,
 * never this file (that would be a cycle).
 *
 * posting/'s one operation, post(wallet, job, intent), never throws for money: it answers
 * { ok: true, postings, wallet, job, totals } or { ok: false, refusal }, a named Refusal
 * (posting/types.ts: insufficient_funds, hold_already_resolved, hold_exceeded,
 * refund_exceeds_consumption, unknown_grant, expiry_not_due, already_expired,
 * already_voided). The writers below turn a refusal into their own (InsufficientFunds,
 * GrantAlreadyVoided, a null) or, where their checks should have made it impossible, into
 * PostingRefused.
 *
 * Each operation with the refusals it can throw or return, as formance's ledger controller
 * lists its errors. The classes are funds/errors.ts's (below, each with a stable `code` for
 * the API) unless another folder is named. A writer's refusal leaves its transaction to roll
 * back: nothing of it is written. "A bug" marks a refusal the caller's own checks should have
 * made impossible (PostingRefused: the posting module refused what it was asked): it answers
 * 500 and is never a client's mistake.
 */

/**
 * Wallets.
 *
 * - insertWallet(tx, tenantId, currency, metadata) → the wallet (and the tenant's system
 *   accounts in the currency, on first use).
 *   Throws: the database's unique violation on accounts_tenant_currency_kind_key (the
 *   tenant has a wallet in the currency).
 * - findWallet(db, walletId, tenantId?) → the wallet, or null: no such wallet (of the tenant).
 * - findSystemAccountId(db, tenantId, currency, kind) → the id, or null: no wallet was ever
 *   opened in the currency.
 * - walletBalances(row): balance, reserved and available of a wallet's row (pure).
 * - readWalletTotals(db, walletIds) → each wallet's totals now, by id; an unknown wallet is
 *   absent. listWalletPage(db, filter, page): GET /v1/wallets. Neither refuses anything.
 */
export { findSystemAccountId, findWallet, insertWallet, walletBalances, type AccountRow } from './accounts.js';
export { readWalletTotals } from './wallet-funds.js';
export { listWalletPage } from './wallet-list.js';

/**
 * Money in: a top-up (a paid grant posted at once), keyed so a retry applies it once.
 *
 * - creditWallet(tx, request) → the credit's entry; `replayed` when its key was applied before.
 *   Throws: WalletNotFound (not the tenant's wallet in the currency); CreditKeyConflict (the
 *   key was applied with another wallet or amount); AmountOutOfRange (money/: the balance
 *   would pass the largest amount Tally keeps); RangeError (an amount ≤ 0: the caller's
 *   check); PostingRefused (a bug).
 * - CREDIT_ROUTE: its route, whose idempotency records are kept for ever.
 */
export { CREDIT_ROUTE, creditWallet } from './credit.js';

/**
 * Grants: their movements, each under the wallet's lock and keyed, so a retry writes nothing twice.
 *
 * - createGrant(tx, request) → the grant; `replayed` when its key was used before,
 *   `activated` when its money entered now.
 *   Throws: WalletNotFound; GrantKeyConflict (the key was used for a grant of other terms);
 *   InvalidExpiry (expires_at not after effective_at, or past); AmountOutOfRange (money/:
 *   the balance would pass the largest amount); RangeError (an amount ≤ 0); PostingRefused (a bug).
 * - activateGrant(tx, grantId, { paid }) → 'activated', or why not, as a result:
 *   'already_active', 'voided', 'canceled' (a payment that ended without money; `paid`
 *   activates it after all), 'not_due', 'balance_limit' (nothing entered).
 *   Throws: GrantNotFound; WalletNotFound; PostingRefused (a bug).
 * - expireGrant(tx, grantId) → the amount that lapsed to breakage, or null: not due, never
 *   activated, or posted before.
 *   Throws: GrantNotFound; WalletNotFound.
 * - voidGrant(tx, grantId, note, tenantId?) → the voided grant (its unheld remaining back to funding).
 *   Throws: GrantNotFound (unknown, or another tenant's); GrantAlreadyVoided;
 *   GrantAwaitingPayment (a payment may still land on it); WalletNotFound.
 * - GRANT_ROUTE: the route that creates one, whose idempotency records are kept for ever.
 *
 * Reading them (none refuses anything but as said):
 * - readGrant(db, id, tenantId?) → the grant, or null: unknown, or another tenant's.
 * - listWalletGrants(db, walletId, filter, page) → a page, or null: the cursor names no
 *   grant of this wallet.
 * - readJobFunding(db, jobId): a job's money per grant, and its debt.
 * - listExpiringGrants(db, hours), lapsingByCurrency(grants): what the expiry sweep would
 *   do (`tally grants expire --dry-run`); nothing is written.
 * - GRANT_STATUSES, PAYMENT_SOURCES: a grant's statuses, and the sources whose money
 *   arrives with a payment.
 */
export { GRANT_ROUTE, activateGrant, createGrant, expireGrant, voidGrant } from './grant-writes.js';
export { listWalletGrants, readGrant, readJobFunding, type FundingShare, type GrantRecord } from './grant-reads.js';
export { GRANT_STATUSES, PAYMENT_SOURCES } from './grant-status.js';
export { lapsingByCurrency, listExpiringGrants } from './expiring-grants.js';

/**
 * A wallet's history: its entries, its holdings at an instant, its statements.
 *
 * - listWalletEntries(db, walletId, page, cursorSequence, filters) → a page, newest first.
 *   Throws: RangeError (a cursor without its sequence: the caller's check).
 * - entrySequence(db, walletId, entryId) → the entry's number, or null: not an entry of
 *   this wallet.
 * - balancesAt(db, walletId, instant) → balance, reserved, available (zero before the
 *   first entry). isFuture(db, instant): whether an answer about it could still change.
 * - readStatement(db, walletId, from, to) → the statement of [from, to).
 *   Throws: StatementTooLong (more than MAX_STATEMENT_LINES entries: ask in parts);
 *   StatementChainBroken (a stored running value disagrees with its entry: run tally
 *   reconcile, running_balance_drift).
 * - STATEMENT_CATEGORIES: the categories its totals are given in.
 */
export {
  MAX_STATEMENT_LINES,
  StatementTooLong,
  balancesAt,
  entrySequence,
  isFuture,
  listWalletEntries,
  readStatement,
} from './wallet-history.js';
export { STATEMENT_CATEGORIES, StatementChainBroken, type CategoryTotal, type Statement } from './statement.js';
export type { WalletEntry } from './entries.js';

/**
 * A wallet's balance thresholds, under the wallet's lock.
 *
 * - insertThreshold(tx, walletId, tenantId, amount) → { created }, or a refusal as a result:
 *   { refused: 'not_found' } (not the tenant's wallet), 'full' (MAX_THRESHOLDS_PER_WALLET
 *   already), 'exists' (one at this amount).
 * - deleteThreshold(tx, walletId, thresholdId) → the deleted threshold, or null: none such.
 * - listThresholds(db, walletId, page): refuses nothing.
 */
export { MAX_THRESHOLDS_PER_WALLET, deleteThreshold, insertThreshold, listThresholds, type ThresholdRow } from './thresholds.js';

/**
 * A tenant's spend limits (a reservation past one is refused: ledger/'s reserveHold throws SpendLimitReached).
 *
 * - putSpendLimit(tx, limit) → the limit and whether it was created, or null: no such tenant.
 *   Throws: Error when the limit was deleted while being replaced (send it again).
 * - deleteSpendLimit(db, tenantId, id) → the deleted limit, or null: the tenant has none such.
 * - listSpendLimits(db, tenantId, page): refuses nothing. SPEND_PERIODS: day, month.
 */
export { SPEND_PERIODS, deleteSpendLimit, listSpendLimits, putSpendLimit, type SpendLimitRow } from './spend-limits.js';

/**
 * The posting writer's steps, for the settlement of jobs (ledger/hold.ts, allocate.ts,
 * write-decision.ts): lock the wallets with their grants, ask the posting module
 * (posting/index.ts), write what it returned.
 *
 * - lockWalletFunds(tx, walletId, jobIds, owner?, grantIds?) → the locked funds, or null:
 *   no such wallet (with `owner`: none of that tenant in that currency).
 * - lockWalletsFunds(tx, walletIds, jobIds, tenantId?) → by wallet id, in the one lock
 *   order; a wallet that does not exist is absent.
 * - applyPostings(tx, wallets, options) → each posting's entries and the balance after it;
 *   entries, projections, grants, shares and draws, then overdraft, depletion and recharge.
 *   Throws: SpendLimitReached (with `guard`, a reservation: over one of the tenant's spend
 *   limits); Error when a wallet vanished or a posting names an account it was not given (a bug).
 */
export { lockWalletFunds, lockWalletsFunds } from './wallet-funds.js';
export { applyPostings, type WalletPostings } from './apply-postings.js';

/**
 * Reconciliation (reconcile/): the projection recomputed from the immutable entries.
 *
 * - projectionFromEntries(accountParam?): the SQL of each account's four sums (pure).
 * - rebuildProjection(tx, accountId): the repair of projection_drift, under the account's
 *   lock. Refuses nothing.
 */
export { projectionFromEntries, rebuildProjection } from './projection.js';

/** The refusals of funds/, each with a stable `code` for the API (api/errors.ts maps them). */
export {
  CreditKeyConflict,
  GrantAlreadyVoided,
  GrantAwaitingPayment,
  GrantKeyConflict,
  GrantNotFound,
  InsufficientFunds,
  InvalidExpiry,
  PostingRefused,
  SpendLimitReached,
  WalletNotFound,
} from './errors.js';
