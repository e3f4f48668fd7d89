import type { FencedClaim, QueueTable } from '../../queue/engine/index.js';

/**
 * stripe_events as a queue of the engine (queue/engine/table.ts). What is its own:
 * - no per-object order: every effect is keyed by Stripe's object and taken under that
 *   object's lock (settle.ts), so events of one payment may settle in any order; one that
 *   needs an object not seen yet waits (back to pending, `waiting_since` kept);
 * - attempts counted at the claim, like provider events (a claim lost to a dead worker
 *   continues its attempt); a wait sets them back to 0: waiting is no failure;
 * - planned at every call (a growing table, like webhook_events).
 */
export const STRIPE_EVENTS_TABLE: QueueTable = {
  name: 'stripe_events',
  table: 'stripe_events',
  key: [{ column: 'id', type: 'text' }],
  states: { column: 'state', claimable: ['pending', 'processing'], claimed: 'processing', retry: 'pending', dead: 'dead' },
  lease: 'lease_until',
  leaseMirror: null,
  token: 'fencing_token',
  due: 'run_after',
  attempts: { column: 'attempts', counted: 'at_claim' },
  error: 'last_error',
  deadAlso: "reason = 'dead_lettered'",
  claim: {
    eligible: null,
    order: 'c.run_after',
    group: null,
    join: null,
    returning: 'w.id, w.type, w.livemode, w.payload, w.attempts, w.fencing_token, w.waiting_since',
    plan: 'per_call',
  },
};

export interface ClaimedStripeEvent {
  id: string;
  type: string;
  livemode: boolean;
  payload: Buffer;
  attempts: number;
  fencing_token: bigint;
  waiting_since: Date | null;
}

export function fencedStripeEvent(claim: ClaimedStripeEvent): FencedClaim {
  return { key: [claim.id], token: BigInt(claim.fencing_token) };
}
