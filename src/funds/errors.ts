/** A wallet's money: refusals that are not database errors, each with a stable `code` for the API. */
import { formatAmount } from '../money/index.js';
import type { Refusal } from './posting/index.js';

export class InsufficientFunds extends Error {
  readonly code = 'insufficient_funds';
  constructor(
    readonly walletId: string,
    readonly requested: bigint,
  ) {
    super(`wallet ${walletId} has less available than the ${requested} micro-units this job reserves`);
    this.name = 'InsufficientFunds';
  }
}

/** No wallet with this id belongs to the tenant in the currency asked for. */
export class WalletNotFound extends Error {
  readonly code = 'not_found';
  constructor(readonly walletId: string) {
    super(`wallet ${walletId} does not exist for this tenant and currency`);
    this.name = 'WalletNotFound';
  }
}

/** A credit key reused for another wallet or amount. */
export class CreditKeyConflict extends Error {
  readonly code = 'credit_key_conflict';
  constructor(readonly settlementKey: string) {
    super(`credit ${settlementKey} was already applied with a different wallet or amount`);
    this.name = 'CreditKeyConflict';
  }
}

/** A spend limit a reservation would exceed (wallet-entries.ts): the period's values, exact bigints as text. */
export interface OverLimit {
  period: 'day' | 'month';
  limit: string;
  /** the period's first day, YYYY-MM-DD (UTC) */
  starts_on: string;
  /** the period's spend before this reservation: captures and adjustments posted in it, plus its open holds */
  spent: string;
}

/** A reservation refused by the tenant's spend limit: nothing is reserved (402 spend_limit_reached). */
export class SpendLimitReached extends Error {
  readonly code = 'spend_limit_reached';
  constructor(
    readonly over: OverLimit,
    readonly currency: string,
    readonly requested: bigint,
  ) {
    const [limit, spent] = [formatAmount(BigInt(over.limit)), formatAmount(BigInt(over.spent))];
    super(
      `the tenant's ${over.period === 'day' ? 'daily' : 'monthly'} spend limit of ${limit} ${currency} is reached: ` +
        `${spent} ${currency} spent this ${over.period} (since ${over.starts_on}T00:00:00Z, UTC; captures and open holds), ` +
        `and this job would reserve ${formatAmount(requested)} more; nothing was reserved`,
    );
    this.name = 'SpendLimitReached';
  }
}

/** A grant's expiry must come after it takes effect, and not be past already: 400 invalid_expiry. */
export class InvalidExpiry extends Error {
  readonly code = 'invalid_expiry';
  constructor(message: string) {
    super(message);
    this.name = 'InvalidExpiry';
  }
}

/** The same grant key (its Idempotency-Key) was used for a grant of other terms. */
export class GrantKeyConflict extends Error {
  readonly code = 'grant_key_conflict';
  constructor(readonly grantKey: string) {
    super(`grant key ${grantKey} was used before for a grant of other terms`);
    this.name = 'GrantKeyConflict';
  }
}

/** No grant with this id (for the caller): 404 not_found alike for unknown and another tenant's. */
export class GrantNotFound extends Error {
  readonly code = 'not_found';
  constructor(readonly grantId: string) {
    super(`grant ${grantId} not found`);
    this.name = 'GrantNotFound';
  }
}

/** A payment grant still awaiting its payment: voiding it would leave that money nowhere to land. */
export class GrantAwaitingPayment extends Error {
  readonly code = 'grant_awaiting_payment';
  constructor(readonly grantId: string) {
    super(`grant ${grantId} is awaiting its payment`);
    this.name = 'GrantAwaitingPayment';
  }
}

/** A void of a grant voided before: 409 grant_voided. */
export class GrantAlreadyVoided extends Error {
  readonly code = 'grant_voided';
  constructor(readonly grantId: string) {
    super(`grant ${grantId} is voided already`);
    this.name = 'GrantAlreadyVoided';
  }
}

/**
 * The posting module refused an intent that the caller's own checks should have kept from
 * it (funds/posting/ Refusal: hold_exceeded, unknown_grant, …). A named refusal, kept as
 * it came, for the log and the 500 it answers: a bug, never a client's mistake.
 */
export class PostingRefused extends Error {
  readonly code = 'posting_refused';
  constructor(
    readonly settlementKey: string,
    readonly refusal: Refusal,
  ) {
    super(`the posting module refused ${settlementKey}: ${JSON.stringify(refusal, (_, v) => (typeof v === 'bigint' ? v.toString() : v))}`);
    this.name = 'PostingRefused';
  }
}
