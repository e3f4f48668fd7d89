import type { Queryable } from '../../db/pool.js';
import { claimDue, writeFenced, type RetryPolicy } from '../../queue/engine/index.js';
import { STRIPE_EVENTS_TABLE, fencedStripeEvent, type ClaimedStripeEvent } from './events-table.js';

/**
 * The write side of stripe_events: stored before the 2xx (intake/stripe-receive.ts, and
 * `tally payments sync` for those that never arrived), claimed and marked under fencing
 * tokens by the payments worker.
 */

export interface NewStripeEvent {
  id: string;
  type: string;
  livemode: boolean;
  objectId: string | null;
  payload: Buffer;
  payloadHash: Buffer;
  /** Stripe's `created`, unix seconds */
  created: number;
  source: 'webhook' | 'sync';
  /** stored as refused, with this reason (event-refusal.ts): never processed */
  refused: string | null;
}

export type StoreOutcome = { kind: 'accepted' | 'duplicate' | 'conflict' } | { kind: 'refused'; reason: string };

/**
 * Stores the event once (its id is the key). A repeat with the same bytes is a
 * duplicate; with other bytes a conflict (counted, never processed); a repeat of a
 * refused event is refused again, for the reason stored the first time.
 */
export async function storeStripeEvent(db: Queryable, event: NewStripeEvent): Promise<StoreOutcome> {
  const inserted = await db.query({
    name: 'store_stripe_event',
    text: `insert into stripe_events (id, type, livemode, object_id, payload, payload_hash, stripe_created, source, state, reason)
      values ($1, $2, $3, $4, $5, $6, to_timestamp($7), $8, case when $9::text is null then 'pending' else 'refused' end, $9)
      on conflict on constraint stripe_events_pkey do nothing`,
    values: [
      event.id,
      event.type,
      event.livemode,
      event.objectId,
      event.payload,
      event.payloadHash,
      event.created,
      event.source,
      event.refused,
    ],
  });
  if (inserted.rowCount === 1) return event.refused ? { kind: 'refused', reason: event.refused } : { kind: 'accepted' };
  const earlier = await db.query<{ payload_hash: Buffer; state: string; source: string; reason: string | null }>(
    'select payload_hash, state, source, reason from stripe_events where id = $1',
    [event.id],
  );
  const row = earlier.rows[0]!;
  // One found by `tally payments sync` was serialised by Tally, not Stripe: the delivery
  // that arrives late is the same event in Stripe's bytes, a duplicate.
  if (!row.payload_hash.equals(event.payloadHash) && row.source !== 'sync' && event.source !== 'sync') {
    await db.query('update stripe_events set conflicts = conflicts + 1 where id = $1', [event.id]);
    return { kind: 'conflict' };
  }
  return row.state === 'refused' ? { kind: 'refused', reason: row.reason ?? 'refused' } : { kind: 'duplicate' };
}

/** The newest `created` of the events received, unix seconds (where `tally payments sync` starts). */
export async function newestReceived(db: Queryable): Promise<number | null> {
  const result = await db.query<{ at: string | null }>(
    'select extract(epoch from max(stripe_created))::bigint::text as at from stripe_events',
  );
  return result.rows[0]?.at ? Number(result.rows[0].at) : null;
}

export async function knownEventIds(db: Queryable, ids: readonly string[]): Promise<Set<string>> {
  const result = await db.query<{ id: string }>('select id from stripe_events where id = any($1::text[])', [ids]);
  return new Set(result.rows.map((r) => r.id));
}

export async function claimStripeEvents(db: Queryable, limit: number, leaseSeconds: number): Promise<ClaimedStripeEvent[]> {
  return claimDue<ClaimedStripeEvent>(db, STRIPE_EVENTS_TABLE, limit, leaseSeconds);
}

/** Waits, errors: capped backoff; an error is dead after 20 failed attempts in a row. */
export const STRIPE_EVENT_RETRY: RetryPolicy = {
  backoff: { floorMs: 200, firstMs: 1_000, capMs: 30_000 },
  maxAttempts: 20,
  retryForMs: null,
};
/** An event waiting for an object: first again within a second, doubling to 30 s. */
export const STRIPE_EVENT_WAIT = { floorMs: 200, firstMs: 1_000, capMs: 30_000 };

/** Settled: applied (it changed something) or no_effect (with why), under the claim's token. */
export async function markStripeEvent(
  tx: Queryable,
  claim: ClaimedStripeEvent,
  outcome: { state: 'applied' | 'no_effect'; reason: string | null },
): Promise<boolean> {
  return writeFenced(tx, STRIPE_EVENTS_TABLE, fencedStripeEvent(claim), {
    name: 'settled',
    set: `state = $3, reason = $4, settled_at = now(), waiting_since = null, last_error = null`,
    values: [outcome.state, outcome.reason],
  });
}

/** Waits for an object Tally has not seen yet: due again in `delayMs`; attempts back to 0 (waiting is no failure). */
export async function waitStripeEvent(tx: Queryable, claim: ClaimedStripeEvent, reason: string, delayMs: number): Promise<boolean> {
  return writeFenced(tx, STRIPE_EVENTS_TABLE, fencedStripeEvent(claim), {
    name: 'wait',
    set: `state = 'pending', reason = $3, waiting_since = coalesce(waiting_since, now()), attempts = 0,
          run_after = now() + make_interval(secs => $4::float8 / 1000)`,
    values: [reason, delayMs],
  });
}

export interface StripeEventRow {
  id: string;
  type: string;
  state: string;
  reason: string | null;
  attempts: number;
  conflicts: number;
  received_at: Date;
  settled_at: Date | null;
}

export async function findStripeEvent(db: Queryable, id: string): Promise<StripeEventRow | null> {
  const result = await db.query<StripeEventRow>(
    'select id, type, state, reason, attempts, conflicts, received_at, settled_at from stripe_events where id = $1',
    [id],
  );
  return result.rows[0] ?? null;
}

/** An operator's re-drive of a dead event (`tally payments retry`): pending again, due now, its attempts from 0. */
export async function requeueDeadStripeEvent(db: Queryable, id: string): Promise<boolean> {
  const result = await db.query(
    `update stripe_events set state = 'pending', reason = null, attempts = 0, run_after = now(), lease_until = null
     where id = $1 and state = 'dead'`,
    [id],
  );
  return result.rowCount === 1;
}
