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

/**
 * A computed amount (a reservation, a balance after a credit) beyond the largest amount
 * Tally stores. The API answers 422 `amount_out_of_range` with the limit in the message.
 */
export class AmountOutOfRange extends Error {
  readonly code = 'amount_out_of_range';

  constructor(what: string, amount: string, limit: string) {
    super(`${what} would be ${amount}, above the largest amount Tally stores, ${limit}`);
    this.name = 'AmountOutOfRange';
  }
}
