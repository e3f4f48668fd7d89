/**
 * Our claim expired and another worker took the row (its fencing token is newer), or the
 * row moved on: a fenced write changed nothing. Thrown inside a transaction, it rolls
 * everything back; the new owner does the work.
 */
export class LeaseLost extends Error {
  readonly code = 'lease_lost';
  constructor(readonly what: string) {
    super(`lost the claim on ${what}: another worker owns it now`);
    this.name = 'LeaseLost';
  }
}
