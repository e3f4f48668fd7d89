/**
 * An amount on the wire that Tally refuses. The API maps it to 400 with the
 * stable `code`; the message says what was wrong so the caller can fix it.
 */
export class InvalidAmountError extends Error {
  readonly code = 'invalid_amount';

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidAmountError';
  }
}
