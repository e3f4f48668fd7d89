import type { FencedClaim, QueueTable } from '../queue/engine/index.js';

/**
 * outbound_deliveries as a queue of the engine (src/queue/engine/). What is its own:
 * - one column for "may be taken": next_attempt_at is the next attempt's time, and while
 *   a delivery is claimed also its lease's end (the lease's mirror), so due deliveries
 *   and lapsed claims are one ordered walk of outbound_deliveries_due_idx that stops at
 *   its limit;
 * - per-endpoint holds: a disabled endpoint's deliveries wait at 'infinity', past the
 *   walk's end (endpoint-holds.ts), and the claim takes none of a disabled endpoint;
 * - attempts counted when a failure is recorded (a worker killed mid-delivery leaves its
 *   claim to lapse: the delivery is sent again, and that is no failed attempt);
 * - no error column: each attempt's answer is kept in outbound_attempts;
 * - a prepared claim (one delivery per claim, a small table walked by its index).
 */
export const DELIVERIES_TABLE: QueueTable = {
  name: 'deliveries',
  table: 'outbound_deliveries',
  key: [{ column: 'id', type: 'bigint' }],
  states: { column: 'state', claimable: ['pending', 'failed', 'delivering'], claimed: 'delivering', retry: 'failed', dead: 'dead' },
  lease: 'lease_expires_at',
  leaseMirror: 'next_attempt_at',
  token: 'claim_token',
  due: 'next_attempt_at',
  attempts: { column: 'attempts', counted: 'at_failure' },
  error: null,
  deadAlso: null,
  claim: {
    eligible: 'exists (select 1 from webhook_endpoints e where e.id = c.endpoint_id and e.disabled_at is null)',
    order: 'c.next_attempt_at',
    group: null,
    join: { from: 'outbound_messages m, webhook_endpoints e', on: 'm.id = w.message_id and e.id = w.endpoint_id' },
    returning: `w.id, w.claim_token, w.attempts, w.created_at, w.endpoint_id, e.tenant_id, e.url,
            array_remove(array[e.secret, case when e.previous_secret_expires_at > now() then e.previous_secret end], null) as secrets,
            m.id as message_id, m.payload`,
    plan: 'prepared',
  },
};

/** A claimed delivery as the engine's fenced writes name it. */
export function fencedDelivery(claim: { id: bigint; claim_token: bigint }): FencedClaim {
  return { key: [claim.id], token: claim.claim_token };
}
