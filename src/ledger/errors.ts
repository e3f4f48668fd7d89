/** Settling jobs: outcomes that are not database errors. Each has a stable `code` for the API. */

export class JobNotFound extends Error {
  readonly code = 'not_found';
  constructor(readonly jobId: string) {
    super(`job ${jobId} does not exist`);
    this.name = 'JobNotFound';
  }
}

/** Another tenant's job of the provider has this provider_job_ref (ledger/job-writes.ts). */
export class ProviderJobRefTaken extends Error {
  constructor(readonly provider: string) {
    super(`another job of provider ${provider} has this provider_job_ref`);
    this.name = 'ProviderJobRefTaken';
  }
}

/**
 * A settlement with our key exists but belongs to another job, phase or version. Keys
 * are composed from those, so this is a bug or tampering — never "a duplicate".
 */
export class SettlementMismatch extends Error {
  readonly code = 'settlement_mismatch';
  constructor(
    readonly settlementKey: string,
    detail: string,
  ) {
    super(`settlement ${settlementKey} exists but does not match: ${detail}`);
    this.name = 'SettlementMismatch';
  }
}

/**
 * The settlement key a decision was about to write exists already: the intended
 * constraint (settlements_settlement_key_key) said so, through ON CONFLICT on it alone.
 * Not an error to report: settle() answers it with the existing effect, verified.
 */
export class SettlementKeyTaken extends Error {
  constructor(readonly settlementKey: string) {
    super(`settlement ${settlementKey} exists already`);
    this.name = 'SettlementKeyTaken';
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

/** A tenant's extension of a job whose hold is resolved (captured or released): 409 job_terminal. */
export class JobTerminal extends Error {
  readonly code = 'job_terminal';
  constructor(readonly state: string) {
    super(`the job is already ${state}: its hold is resolved and can no longer grow`);
    this.name = 'JobTerminal';
  }
}
