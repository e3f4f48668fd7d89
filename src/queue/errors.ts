/**
 * Our claim on the event expired and another worker took it (its fencing token is
 * newer). Everything this transaction wrote is rolled back; the new owner settles.
 */
export class LeaseLost extends Error {
  readonly code = 'lease_lost';
  constructor(readonly provider: string, readonly eventKey: string) {
    super(`lost the claim on event ${provider}/${eventKey}: another worker owns it now`);
    this.name = 'LeaseLost';
  }
}
