import type { Queryable } from '../db/pool.js';
import { claimDue, claimNamed, claimSql, extendLeases as extendEngineLeases, lockDue } from './engine/index.js';
import { EVENTS_TABLE, fencedEvent } from './events-table.js';
import type { ClaimedEvent } from './types.js';

/**
 * The claim of ready events, `limit` at most ($1: lease seconds): the engine's one claim
 * (engine/statements.ts: claimSql) over webhook_events' description (events-table.ts:
 * per-job order, the (run_after, seq) walk). bench/claim-explain.ts and
 * test/integration/claim-plan.test.ts EXPLAIN this text.
 */
export function claimReadyStatement(limit: number): string {
  return claimSql(EVENTS_TABLE, limit);
}

/**
 * Claims up to `limit` ready events (a worker's loop). Planned at every call, for the
 * table as it is now (events-table.ts says why); planning costs about half a millisecond,
 * once per batch.
 */
export async function claimEvents(db: Queryable, limit: number, leaseSeconds: number): Promise<ClaimedEvent[]> {
  return claimDue<ClaimedEvent>(db, EVENTS_TABLE, limit, leaseSeconds);
}

/** A ready event locked by lockReadyEvents: as claimed, plus the row's own state and lease. */
export interface LockedEvent extends ClaimedEvent {
  locked: true;
  claim_state: string;
  claim_lease: Date | null;
}

/**
 * Locks up to `limit` ready events in the caller's transaction — the claim's walk, one
 * tenant's events, FOR UPDATE SKIP LOCKED — without claiming them: no lease, no write, so
 * an event settled in that same transaction is written once, by its mark (the claim's
 * row version, its index entries and its commit are not written at all). Each comes with
 * a fresh token for the mark to stamp. Rows the transaction cannot finish (a retry, a
 * lapsed claim, a usage fetch) are the caller's to leave alone: they are unlocked at its
 * end, for a leased claim. Planned at every call, as the claim is.
 */
export async function lockReadyEvents(tx: Queryable, limit: number): Promise<LockedEvent[]> {
  const rows = await lockDue<Omit<LockedEvent, 'locked'>>(tx, EVENTS_TABLE, limit);
  return rows.map((row) => ({ ...row, locked: true }));
}

/**
 * Claims one named event now, whatever its run_after, by the same rule as claimEvents: a
 * live worker's unexpired claim, a settled event or one behind an earlier unsettled event
 * of its job is not taken (null). A dead event is re-queued first (requeueDead).
 */
export async function claimEvent(db: Queryable, provider: string, eventKey: string, leaseSeconds: number): Promise<ClaimedEvent | null> {
  return claimNamed<ClaimedEvent>(db, EVENTS_TABLE, [provider, eventKey], leaseSeconds);
}

/**
 * Pushes the leases of claims still in hand to `leaseSeconds` from now — fenced by each
 * claim's token, so a claim another worker took over is never extended (worker/lease-keeper.ts).
 */
export async function extendLeases(db: Queryable, claims: readonly ClaimedEvent[], leaseSeconds: number): Promise<number> {
  return extendEngineLeases(db, EVENTS_TABLE, claims.map(fencedEvent), leaseSeconds);
}
