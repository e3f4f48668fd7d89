import type { FencedClaim, QueueTable } from '../../queue/engine/index.js';

/**
 * stripe_calls as a queue of the engine: the outbox of Tally's calls to Stripe (a
 * recharge's payment intent). A row is written by the transaction that decided the call
 * and claimed after commit; the call is made outside any transaction with the row's
 * Idempotency-Key, so a worker killed before, during or after it makes at most one
 * payment intent: the next claim sends the same parameters under the same key and
 * Stripe answers what it answered first. Attempts counted when a failure is recorded (a
 * lost claim is no failed attempt).
 */
export const STRIPE_CALLS_TABLE: QueueTable = {
  name: 'stripe_calls',
  table: 'stripe_calls',
  key: [{ column: 'id', type: 'uuid' }],
  states: { column: 'state', claimable: ['pending', 'calling'], claimed: 'calling', retry: 'pending', dead: 'dead' },
  lease: 'lease_until',
  leaseMirror: null,
  token: 'fencing_token',
  due: 'run_after',
  attempts: { column: 'attempts', counted: 'at_failure' },
  error: 'last_error',
  deadAlso: null,
  claim: {
    eligible: null,
    order: 'c.run_after',
    group: null,
    join: null,
    returning: 'w.id, w.grant_id, w.tenant_id, w.wallet_id, w.idempotency_key, w.params, w.attempts, w.fencing_token, w.created_at',
    plan: 'prepared',
  },
};

export interface RechargeParams {
  amount: number;
  currency: string;
  customer: string;
  payment_method: string;
  off_session: true;
  confirm: true;
  metadata: { tally_grant_id: string; tally_wallet_id: string };
}

export interface ClaimedCall {
  id: string;
  grant_id: string;
  tenant_id: string;
  wallet_id: string;
  idempotency_key: string;
  params: RechargeParams;
  attempts: number;
  fencing_token: bigint;
  created_at: Date;
}

export function fencedCall(claim: ClaimedCall): FencedClaim {
  return { key: [claim.id], token: BigInt(claim.fencing_token) };
}
