import type { Grant } from '../../src/funds/posting/index.js';

/** An instant for the posting module's pure tests, in microseconds. */
export const T0 = 1_800_000_000_000_000n;

/** A grant as the posting module sees it: paid, priority 50, effective and created at T0, nothing in it yet. */
export function grantFixture(id: string, fields: Partial<Grant> = {}): Grant {
  return {
    id,
    category: 'paid',
    priority: 50,
    effectiveAt: T0,
    expiresAt: null,
    createdAt: T0,
    remaining: 0n,
    held: 0n,
    voided: false,
    disputed: false,
    expiryPosted: false,
    expiredAmount: 0n,
    voidedAmount: 0n,
    ...fields,
  };
}
