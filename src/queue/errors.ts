import { LeaseLost } from './engine/errors.js';

export { LeaseLost };

/**
 * Our claim on the event expired and another worker took it (its fencing token is
 * newer). Everything this transaction wrote is rolled back; the new owner settles.
 */
export function eventLeaseLost(provider: string, eventKey: string): LeaseLost {
  return new LeaseLost(`event ${provider}/${eventKey}`);
}
