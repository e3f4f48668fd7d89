/**
 * Glossary of the queue (docs/ARCHITECTURE.md has the rest):
 *
 * - **outbox** — webhook_events: intake's transaction writes the event row, and that row
 *   is the worker's to-do item; 2xx to the provider means it is durable, not settled.
 * - **event sequence** — webhook_events.seq, numbered by intake under the job's row lock
 *   (jobs.event_seq): a job's events settle in that order, one at a time.
 * - **claim**, **lease**, **fencing token** — the queue engine's (engine/table.ts): a claim
 *   takes an event to `processing` with a lease (lease_until) and a fresh token from
 *   fencing_tokens; every later write names the token, so a worker whose lease ran out
 *   writes nothing (LeaseLost).
 * - **attempt** — one try at settling (webhook_events.attempts): starts when a claim takes a
 *   pending event, ends settled, retried with backoff or dead-lettered.
 */

/** What a fenced write names: the event, and the token of the claim that may write it. */
export interface EventClaim {
  provider: string;
  eventKey: string;
  fencingToken: bigint;
  /** the event's tenant, so its writes name one (docs/operations/scaling.md); claimOf always sets it */
  tenantId?: string;
  /**
   * Taken by a row lock in the settling transaction itself (claim.ts: lockReadyEvents),
   * not by a leased claim: the event is still pending, and its mark stamps `fencingToken`.
   */
  locked?: true;
}

/** The stored canonical event (webhook_events.event): what the worker settles, nothing raw. */
export interface StoredEvent {
  type: string;
  usage?: Record<string, number>;
  correction?: number;
  fetch_usage?: boolean;
  usage_resource?: string;
}

/** A claimed event: the outbox row plus the fencing token this claim owns. */
export interface ClaimedEvent {
  provider: string;
  event_key: string;
  tenant_id: string;
  job_id: string;
  seq: bigint;
  type: string;
  event: StoredEvent;
  /** usage as accepted: fetched from the provider's API, or null (then the webhook's) */
  usage: Record<string, number> | null;
  attempts: number;
  fencing_token: bigint;
  /** taken by a row lock in the settling transaction, not leased (EventClaim.locked) */
  locked?: true;
}

/** A claim as a fenced write names it. */
export function claimOf(claimed: ClaimedEvent | EventClaim): EventClaim {
  return 'fencing_token' in claimed
    ? {
        provider: claimed.provider,
        eventKey: claimed.event_key,
        fencingToken: claimed.fencing_token,
        tenantId: claimed.tenant_id,
        ...(claimed.locked ? { locked: true as const } : {}),
      }
    : claimed;
}

/** The longest error text kept on an event (last_error): enough to diagnose, bounded. */
export const ERROR_TEXT_MAX_LENGTH = 2000;
