import type { Queryable } from '../../db/pool.js';
import { claimDue, writeFenced, type RetryPolicy } from '../../queue/engine/index.js';
import { STRIPE_CALLS_TABLE, fencedCall, type ClaimedCall } from './calls-table.js';

/** The outbox of calls to Stripe (calls-table.ts): claimed, then finished under the claim's token. */

export async function claimStripeCalls(db: Queryable, limit: number, leaseSeconds: number): Promise<ClaimedCall[]> {
  return claimDue<ClaimedCall>(db, STRIPE_CALLS_TABLE, limit, leaseSeconds);
}

/**
 * A call Stripe never answered definitively is retried with the same Idempotency-Key, for
 * up to 23 hours: Stripe keeps a key's first answer for 24 hours, and a call after that
 * could charge twice. Then it is dead, and its recharge stays in flight for an operator
 * (recharge_unresolved).
 */
export const STRIPE_CALL_RETRY: RetryPolicy = {
  backoff: { floorMs: 'half', firstMs: 1_000, capMs: 60_000 },
  maxAttempts: null,
  retryForMs: 23 * 3_600_000,
};

/** Stripe answered: succeeded, processing (its event will tell), or declined (with why). */
export async function finishStripeCall(
  tx: Queryable,
  claim: ClaimedCall,
  answer: { outcome: string; paymentIntent: string | null; error: string | null },
): Promise<boolean> {
  return writeFenced(tx, STRIPE_CALLS_TABLE, fencedCall(claim), {
    name: 'finished',
    set: `state = 'done', outcome = $3, payment_intent = $4, last_error = $5, finished_at = now()`,
    values: [answer.outcome, answer.paymentIntent, answer.error],
  });
}
