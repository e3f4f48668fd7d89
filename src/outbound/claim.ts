import type { Queryable } from '../db/pool.js';
import { claimDue } from '../queue/engine/index.js';
import { DELIVERIES_TABLE } from './deliveries-table.js';
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
 * Claims due deliveries (pending, or failed with the next attempt's time come) and claims
 * whose lease ran out (a worker killed mid-delivery: its delivery is tried again — at
 * least once, never lost), of endpoints not disabled: the engine's one claim over
 * outbound_deliveries' description (deliveries-table.ts). The outcome is written only
 * under the claim's token (outcome.ts), so a worker whose lease ran out while it waited
 * on a slow receiver cannot overwrite the new owner's.
 */
export async function claimDeliveries(db: Queryable, limit: number, leaseSeconds: number): Promise<ClaimedDelivery[]> {
  return claimDue<ClaimedDelivery>(db, DELIVERIES_TABLE, limit, leaseSeconds);
}
