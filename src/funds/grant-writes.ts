import type { Queryable } from '../db/pool.js';
import { NO_FUNDING, post, walletTotals, type GrantCategory } from './posting/index.js';
import { AmountOutOfRange, MAX_AMOUNT_MICROS, formatAmount } from '../money/index.js';
import { findGrant, insertGrant, markActivated, recordVoid, type GrantRow, type GrantSource } from './grants.js';
import { PAYMENT_SOURCES } from './grant-status.js';
import { lockWalletFunds } from './wallet-funds.js';
import type { AccountRow } from './accounts.js';
import { GrantAlreadyVoided, GrantAwaitingPayment, GrantKeyConflict, GrantNotFound, InvalidExpiry, PostingRefused, WalletNotFound } from './errors.js';
import { announceGrantActivated, announceGrantCreated, announceGrantExpired, announceGrantVoided } from './grant-events.js';
import { applyPosting } from './apply-postings.js';

/**
 * The API route that creates a grant. Like a credit's, its idempotency records are kept
 * for ever (the idempotency cleanup skips it): the grant's key derives from its
 * Idempotency-Key, so a retry years later must still find the first answer.
 */
export const GRANT_ROUTE = '/v1/wallets/:id/grants';

/**
 * The movements of a grant that are not a job's: its creation (and activation, at once or
 * when it takes effect), its expiry and its void. Each locks the wallet with its grants,
 * asks the posting module, and writes what it says (apply-postings.ts), keyed so that a
 * retry writes nothing twice: an activation under the grant's key, an expiry and a void
 * under keys of the grant's id.
 */

export interface GrantRequest {
  wallet: Pick<AccountRow, 'id' | 'tenant_id' | 'currency'>;
  amount: bigint;
  category: GrantCategory;
  priority: number;
  /** RFC 3339; default now */
  effectiveAt?: string | null;
  expiresAt?: string | null;
  reference?: string | null;
  metadata?: Record<string, string>;
  /** stable for every retry of this grant (derived from its Idempotency-Key) */
  grantKey: string;
  source?: GrantSource;
  /** inserted unactivated: its payment's success activates it (activateGrant with `paid`) */
  awaitingPayment?: boolean;
  payment?: Record<string, unknown> | null;
}

export interface GrantOutcome {
  grant: GrantRow;
  /** true when the key was used before and nothing was written now */
  replayed: boolean;
  /** true when its money entered the wallet now */
  activated: boolean;
}

export async function createGrant(tx: Queryable, request: GrantRequest): Promise<GrantOutcome> {
  const { wallet } = request;
  if (request.amount <= 0n) throw new RangeError('a grant must be positive');
  const locked = await lockWalletFunds(tx, wallet.id, [], { tenantId: wallet.tenant_id, currency: wallet.currency });
  if (!locked) throw new WalletNotFound(wallet.id);
  const existing = await findGrant(tx, { grantKey: request.grantKey });
  if (existing) {
    const same =
      existing.wallet_id === wallet.id &&
      existing.amount === request.amount &&
      existing.category === request.category &&
      existing.priority === request.priority;
    if (!same) throw new GrantKeyConflict(request.grantKey);
    return { grant: existing, replayed: true, activated: false };
  }
  // As for a credit: a wallet never holds more than the largest amount on the wire.
  const after = walletTotals(locked.funds, locked.now).balance + request.amount;
  if (after > MAX_AMOUNT_MICROS) throw new AmountOutOfRange("the wallet's balance", formatAmount(after), formatAmount(MAX_AMOUNT_MICROS));
  const grant = await insertGrant(tx, {
    tenantId: wallet.tenant_id,
    walletId: wallet.id,
    currency: wallet.currency,
    category: request.category,
    priority: request.priority,
    amount: request.amount,
    source: request.source ?? 'grant',
    grantKey: request.grantKey,
    effectiveAt: request.effectiveAt ?? null,
    expiresAt: request.expiresAt ?? null,
    reference: request.reference ?? null,
    metadata: request.metadata ?? {},
    awaitingPayment: request.awaitingPayment ?? false,
    payment: request.payment ?? null,
  });
  if (!grant) throw new InvalidExpiry('expires_at must be after effective_at (default: now) and in the future');
  if (grant.activated) {
    const funds = { ...locked.funds, grants: [...locked.funds.grants, grant] };
    const posting = post(funds, NO_FUNDING, {
      kind: 'activate',
      grantId: grant.id,
      amount: request.amount,
      entry: 'grant',
      now: grant.createdAt,
    });
    if (!posting.ok) throw new PostingRefused(request.grantKey, posting.refusal);
    await applyPosting(tx, { ...locked, funds }, posting, { settlementKey: request.grantKey, reference: request.reference ?? null });
  }
  await announceGrantCreated(tx, grant.id, grant.activated);
  return { grant: (await findGrant(tx, { id: grant.id }))!, replayed: false, activated: grant.activated };
}

/**
 * What an activation did: `activated` (its money entered now), or why not — `already_active`,
 * `voided` (an operator voided it before it took effect), `canceled` (a payment that ended
 * without money; only a payment's success activates it after all), `not_due` (before its
 * effective_at), `balance_limit` (its money would take the wallet past the largest balance
 * Tally keeps, as for a credit: nothing entered).
 */
export type ActivationOutcome = 'activated' | 'already_active' | 'voided' | 'canceled' | 'not_due' | 'balance_limit';

/**
 * A scheduled grant whose effective_at has come, or (`paid`) a grant whose payment
 * succeeded: its money enters now, paying the debt first. A payment's success activates
 * even a canceled grant (the money was taken: CONTRACT.md "Payments").
 */
export async function activateGrant(tx: Queryable, grantId: string, options: { paid?: boolean } = {}): Promise<ActivationOutcome> {
  const row = await findGrant(tx, { id: grantId });
  if (!row) throw new GrantNotFound(grantId);
  const locked = await lockWalletFunds(tx, row.wallet_id);
  if (!locked) throw new WalletNotFound(row.wallet_id);
  const fresh = (await findGrant(tx, { id: grantId }))!;
  if (fresh.activated_at !== null) return 'already_active';
  if (fresh.voided_at !== null) return 'voided';
  if (fresh.canceled_at !== null && !options.paid) return 'canceled';
  const due = await tx.query<{ due: boolean }>('select effective_at <= clock_timestamp() as due from grants where id = $1', [grantId]);
  if (!due.rows[0]!.due) return 'not_due';
  // The same limit as a credit's and a new grant's: no wallet holds more than the largest amount on the wire.
  if (walletTotals(locked.funds, locked.now).balance + fresh.amount > MAX_AMOUNT_MICROS) return 'balance_limit';
  await markActivated(tx, grantId);
  const reloaded = (await lockWalletFunds(tx, row.wallet_id, [], undefined, [grantId]))!;
  const posting = post(reloaded.funds, NO_FUNDING, { kind: 'activate', grantId, amount: fresh.amount, entry: 'grant', now: reloaded.now });
  if (!posting.ok) throw new PostingRefused(fresh.grant_key, posting.refusal);
  await applyPosting(tx, reloaded, posting, { settlementKey: fresh.grant_key, reference: fresh.reference });
  await announceGrantActivated(tx, reloaded, { id: grantId, category: fresh.category, amount: fresh.amount });
  return 'activated';
}

/**
 * The expiry of a grant past expires_at: its unheld remaining to the breakage account,
 * once (keyed by the grant). Returns the amount that lapsed, or null when it is not due
 * or has posted before.
 */
export async function expireGrant(tx: Queryable, grantId: string): Promise<bigint | null> {
  const row = await findGrant(tx, { id: grantId });
  if (!row) throw new GrantNotFound(grantId);
  const locked = await lockWalletFunds(tx, row.wallet_id, [], undefined, [grantId]);
  if (!locked) throw new WalletNotFound(row.wallet_id);
  if (!locked.funds.grants.some((g) => g.id === grantId)) return null; // never activated: nothing entered, nothing lapses
  const posting = post(locked.funds, NO_FUNDING, { kind: 'expire', grantId, now: locked.now });
  if (!posting.ok) return null;
  const expired = posting.wallet.grants.find((g) => g.id === grantId)!;
  const lapsed = expired.expiredAmount - locked.funds.grants.find((g) => g.id === grantId)!.expiredAmount;
  await applyPosting(tx, locked, posting, { settlementKey: `${row.tenant_id}:grant:${grantId}:expiry` });
  await announceGrantExpired(tx, locked, expired, lapsed);
  return lapsed;
}

/**
 * An operator's void: the grant's unheld remaining leaves the wallet at once (grant_void,
 * to the funding account it came from); held shares stay with their jobs and leave when
 * they return. A grant that never took effect is voided with no entry.
 */
export async function voidGrant(tx: Queryable, grantId: string, note: string, tenantId?: string | null): Promise<GrantRow> {
  const row = await findGrant(tx, { id: grantId }, tenantId);
  if (!row) throw new GrantNotFound(grantId);
  const locked = await lockWalletFunds(tx, row.wallet_id, [], undefined, [grantId]);
  if (!locked) throw new WalletNotFound(row.wallet_id);
  const fresh = (await findGrant(tx, { id: grantId }))!;
  if (fresh.voided_at !== null) throw new GrantAlreadyVoided(grantId);
  // Money the customer may still pay must have a grant to land in (CONTRACT.md "Payments", Edges).
  if (awaitsPayment(fresh)) throw new GrantAwaitingPayment(grantId);
  await recordVoid(tx, grantId, note);
  let voided = 0n;
  const before = locked.funds.grants.find((g) => g.id === grantId);
  if (before) {
    const posting = post(locked.funds, NO_FUNDING, { kind: 'void', grantId, now: locked.now });
    if (!posting.ok) throw new GrantAlreadyVoided(grantId);
    voided = posting.wallet.grants.find((g) => g.id === grantId)!.voidedAmount - before.voidedAmount;
    await applyPosting(tx, locked, posting, { settlementKey: `${row.tenant_id}:grant:${grantId}:void`, reference: note });
  }
  await announceGrantVoided(tx, locked, { id: grantId, category: row.category }, voided, note);
  return (await findGrant(tx, { id: grantId }))!;
}

/** A payment grant whose payment has neither come nor ended: awaiting_payment (grant-status.ts). */
function awaitsPayment(grant: GrantRow): boolean {
  return grant.activated_at === null && grant.canceled_at === null && PAYMENT_SOURCES.includes(grant.source);
}
