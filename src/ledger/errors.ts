/** Ledger outcomes that are not database errors. Each has a stable `code` for the API. */

export class InsufficientFunds extends Error {
  readonly code = 'insufficient_funds';
  constructor(readonly walletId: string, readonly requested: bigint) {
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

export class JobNotFound extends Error {
  readonly code = 'not_found';
  constructor(readonly jobId: string) {
    super(`job ${jobId} does not exist`);
    this.name = 'JobNotFound';
  }
}

/**
 * A settlement with our key exists but belongs to another job, phase or version. Keys
 * are composed from those, so this is a bug or tampering — never "a duplicate".
 */
export class SettlementMismatch extends Error {
  readonly code = 'settlement_mismatch';
  constructor(readonly settlementKey: string, detail: string) {
    super(`settlement ${settlementKey} exists but does not match: ${detail}`);
    this.name = 'SettlementMismatch';
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

/** COMMIT's outcome is unknown and the read-back could not tell either. Retry later. */
export class OutcomeUnknown extends Error {
  readonly code = 'outcome_unknown';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'OutcomeUnknown';
  }
}
