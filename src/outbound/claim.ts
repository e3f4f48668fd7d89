import type { Queryable } from '../db/pool.js';
import type { MessagePayload } from './events.js';

/** A delivery a worker holds: what to send where, and the token its outcome is written under. */
export interface ClaimedDelivery {
  id: bigint;
  claim_token: bigint;
  /** failed attempts so far */
  attempts: number;
  created_at: Date;
  endpoint_id: string;
  tenant_id: string;
  url: string;
  /** the current secret, and the previous one while its grace period lasts */
  secrets: string[];
  message_id: string;
  payload: MessagePayload;
}

/**
 * THE claim of outbound deliveries. Due deliveries (pending, or failed with the next
 * attempt's time come), and claims whose lease ran out (a worker killed mid-delivery:
 * its delivery is tried again — at least once, never lost), of endpoints not disabled.
 * Both are "next_attempt_at has come" (a claim sets it to the lease's end), so the claim
 * is one ordered walk of one partial index that stops at its limit; a disabled endpoint's
 * deliveries wait at 'infinity' (endpoint-holds.ts), out of the walk's way.
 * FOR UPDATE SKIP LOCKED: workers never wait on each other. Every claim takes a fresh
 * token from a sequence; the outcome is written only under it (outcome.ts), so a worker
 * whose lease ran out while it waited on a slow receiver cannot overwrite the new owner's.
 */
const CLAIM = `
  with ready as (
    select d.id
    from outbound_deliveries d
    where d.state in ('pending', 'failed', 'delivering') and d.next_attempt_at <= now()
      and exists (select 1 from webhook_endpoints e where e.id = d.endpoint_id and e.disabled_at is null)
    order by d.next_attempt_at
    limit $1
    for update of d skip locked
  )
  update outbound_deliveries d
  set state = 'delivering', lease_expires_at = now() + make_interval(secs => $2), next_attempt_at = now() + make_interval(secs => $2),
      claim_token = nextval('outbound_claim_tokens')
  from ready, outbound_messages m, webhook_endpoints e
  where d.id = ready.id and m.id = d.message_id and e.id = d.endpoint_id
  returning d.id, d.claim_token, d.attempts, d.created_at, d.endpoint_id, e.tenant_id, e.url,
            array_remove(array[e.secret, case when e.previous_secret_expires_at > now() then e.previous_secret end], null) as secrets,
            m.id as message_id, m.payload`;

export async function claimDeliveries(db: Queryable, limit: number, leaseSeconds: number): Promise<ClaimedDelivery[]> {
  const result = await db.query<ClaimedDelivery>({ name: 'claim_outbound_deliveries', text: CLAIM, values: [limit, leaseSeconds] });
  return result.rows;
}
