import type { Queryable } from '../db/pool.js';
import { tenantRuns } from '../db/tenant-groups.js';
import {
  deadLetter as deadLetterRow,
  fenceSql,
  readBack,
  recordFailure,
  retryLater,
  writeFenced,
  type FailedOutcome,
  type Failure,
  type RetryPolicy,
  type RetryVariant,
} from './engine/index.js';
import { eventLeaseLost } from './errors.js';
import { EVENTS_TABLE, fencedEvent } from './events-table.js';
import { claimOf, ERROR_TEXT_MAX_LENGTH, type ClaimedEvent, type EventClaim } from './types.js';

/**
 * The fenced writes of webhook events: the engine's (engine/statements.ts), each naming
 * the claim's fencing token and changing the event only while that claim is current
 * (state processing, same token). Zero rows means the claim was lost: the caller wrote
 * nothing (a mark inside a transaction throws LeaseLost so the whole transaction rolls back).
 */
const FENCE = fenceSql(EVENTS_TABLE);

type Claim = ClaimedEvent | EventClaim;

function fence(claim: Claim): [string, string, string] {
  const { provider, eventKey, fencingToken } = claimOf(claim);
  return [provider, eventKey, fencingToken.toString()];
}

function errorText(error: string): string {
  return error.slice(0, ERROR_TEXT_MAX_LENGTH);
}

/** What a settled event's row records of decide()'s outcome. */
export interface SettledMark {
  /** the outcome's status; `rejected` (a tenant's cancel) never comes from an event and is kept as no_effect */
  status: 'applied' | 'no_effect' | 'stale' | 'rejected';
  reason: string | null;
  settlementKey: string | null;
  /** kept as last_error: why an event that settled as no effect did (an event_mismatch) */
  note?: string;
}

/** Records the outcome inside the settle transaction. Throws LeaseLost (rolling it back) when the claim is gone. */
export async function markSettled(tx: Queryable, claim: Claim, mark: SettledMark): Promise<void> {
  if (claimOf(claim).locked) throw new Error('markSettled fences a leased claim; a locked one is marked by markManySettled');
  const state = mark.status === 'rejected' ? 'no_effect' : mark.status;
  const marked = await writeFenced(tx, EVENTS_TABLE, fencedEvent(claim), {
    name: 'mark_settled',
    set: 'state = $4, reason = $5, settlement_key = $6, processed_at = now(), last_error = $7',
    values: [state, mark.reason, mark.settlementKey, mark.note === undefined ? null : errorText(mark.note)],
  });
  if (!marked) throw eventLeaseLost(claimOf(claim).provider, claimOf(claim).eventKey);
}

/**
 * markSettled for several claims, each fenced by its own token, or by this transaction's
 * row lock for a locked claim: one statement per tenant and kind (a settlement batch is
 * one tenant's, and all leased or all locked: one statement). Throws LeaseLost for the
 * first claim no longer current (rolling the transaction back).
 */
export async function markManySettled(tx: Queryable, marks: readonly { claim: Claim; mark: SettledMark }[]): Promise<void> {
  for (const run of tenantRuns(marks, (m) => claimOf(m.claim).tenantId)) {
    const locked = run.items.filter((m) => claimOf(m.claim).locked);
    const leased = run.items.filter((m) => !claimOf(m.claim).locked);
    if (leased.length > 0) await markRunSettled(tx, run.tenantId, leased, false);
    if (locked.length > 0) await markRunSettled(tx, run.tenantId, locked, true);
  }
}

/**
 * One tenant's marks. Leased claims are fenced by their tokens (the row still claimed
 * under each); locked ones (lockReadyEvents) by the row lock this transaction holds,
 * checked as "still pending, no lease": their mark is the event's only write, so it
 * stamps the token the lock handed out and counts the attempt the claim would have.
 */
async function markRunSettled(
  tx: Queryable,
  tenantId: string | undefined,
  marks: readonly { claim: Claim; mark: SettledMark }[],
  locked: boolean,
): Promise<void> {
  const claims = marks.map((m) => claimOf(m.claim));
  const fence = locked
    ? "w.state = 'pending' and w.lease_until is null"
    : "w.fencing_token = m.fencing_token and w.state = 'processing'";
  // Planned on every call, like the claim (claim.ts): a kept plan of this join to the
  // growing webhook_events went slow under load. A claim made by hand (tests) may not
  // know its tenant: then the events are found by their keys alone.
  const result = await tx.query<{ provider: string; event_key: string }>({
    text: `update webhook_events w
     set state = m.state, reason = m.reason, settlement_key = m.settlement_key, processed_at = now(), lease_until = null, last_error = m.note${
       locked ? ',\n         fencing_token = m.fencing_token, attempts = w.attempts + 1' : ''
     }
     from unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[])
       as m(provider, event_key, fencing_token, state, reason, settlement_key, note)
     where ${tenantId === undefined ? '' : 'w.tenant_id = $8 and '}w.provider = m.provider and w.event_key = m.event_key
       and ${fence}
     returning w.provider, w.event_key`,
    values: [
      claims.map((c) => c.provider),
      claims.map((c) => c.eventKey),
      claims.map((c) => c.fencingToken.toString()),
      marks.map(({ mark }) => (mark.status === 'rejected' ? 'no_effect' : mark.status)),
      marks.map(({ mark }) => mark.reason),
      marks.map(({ mark }) => mark.settlementKey),
      marks.map(({ mark }) => (mark.note === undefined ? null : errorText(mark.note))),
      ...(tenantId === undefined ? [] : [tenantId]),
    ],
  });
  if (result.rowCount === claims.length) return;
  const marked = new Set(result.rows.map((r) => JSON.stringify([r.provider, r.event_key])));
  const lost = claims.find((c) => !marked.has(JSON.stringify([c.provider, c.eventKey])))!;
  throw eventLeaseLost(lost.provider, lost.eventKey);
}

/** Back to pending after a transient failure, due in `delayMs`, if we still own the claim. */
export async function scheduleRetry(db: Queryable, claim: Claim, delayMs: number, error: string): Promise<boolean> {
  return retryLater(db, EVENTS_TABLE, fencedEvent(claim), delayMs, errorText(error));
}

/**
 * A failed settle attempt, recorded by the engine's rule: back to pending with the
 * policy's backoff, or dead-lettered (after its attempts, or at once when permanent);
 * fenced, so a claim another worker took over records nothing ('lease_lost').
 */
export async function recordSettleFailure(db: Queryable, claim: Claim, policy: RetryPolicy, failure: Failure, error: string): Promise<FailedOutcome> {
  return recordFailure(db, EVENTS_TABLE, policy, fencedEvent(claim), failure, errorText(error));
}

/** Parks the event for an operator. The job's hold stays open: nothing is dropped. */
export async function deadLetter(db: Queryable, claim: Claim, error: string): Promise<boolean> {
  return deadLetterRow(db, EVENTS_TABLE, fencedEvent(claim), errorText(error));
}

/** What a claim's owner reads of its event before fetching usage for it. */
export interface FetchState {
  usage: Record<string, number> | null;
  usage_fetched_at: Date | null;
  fetch_attempts: number;
  payload_hash: Buffer;
}

/** The event's fetch state, if the claim is still ours (null: lost). */
export async function readOwnedEvent(db: Queryable, claim: Claim): Promise<FetchState | null> {
  const result = await db.query<FetchState>(
    `select usage, usage_fetched_at, fetch_attempts, payload_hash from webhook_events where ${FENCE}`,
    fence(claim),
  );
  return result.rows[0] ?? null;
}

/** Stores the fetched usage on the event, fenced by the claim's token. False: the claim was lost. */
export async function storeFetchedUsage(db: Queryable, claim: Claim, usage: Record<string, number> | null): Promise<boolean> {
  // The claim stays current (its lease too): the settle transaction comes next.
  const result = await db.query({
    name: 'events_store_fetched_usage',
    text: `update webhook_events set usage = $4, usage_fetched_at = now(), last_error = null
     where ${FENCE}`,
    values: [...fence(claim), usage === null ? null : JSON.stringify(usage)],
  });
  return result.rowCount === 1;
}

/**
 * A failed fetch goes back to pending with its own backoff. The claim's attempt is given
 * back (attempts − 1): fetch failures never count towards MAX_SETTLE_ATTEMPTS, so they
 * never dead-letter; an event failing for 5 minutes shows as event_stuck instead.
 */
const FETCH_RETRY: RetryVariant = { name: 'fetch_retry', also: 'attempts = greatest(attempts - 1, 0), fetch_attempts = fetch_attempts + 1' };

export async function scheduleFetchRetry(db: Queryable, claim: Claim, delayMs: number, error: string): Promise<boolean> {
  return retryLater(db, EVENTS_TABLE, fencedEvent(claim), delayMs, errorText(error), FETCH_RETRY);
}

/**
 * After the in-doubt transaction of a lost COMMIT has ended (the caller waited on its
 * job rows): whether it marked the event under this claim — a write only that
 * transaction could have made (the engine's read-back).
 */
export async function markedUnder(db: Queryable, claim: EventClaim): Promise<boolean> {
  return (await readBack(db, EVENTS_TABLE, fencedEvent(claim), false)) === 'committed';
}
