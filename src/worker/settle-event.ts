import type { Pool } from '../db/pool.js';
import type { LifecycleEvent } from '../lifecycle/index.js';
import { OutcomeUnknown, settle, settleBatch, settleTaken, type SettleResult } from '../ledger/index.js';
import { failpoint } from '../failpoints.js';
import { LeaseLost, claimOf, claimedLifecycleEvent, lockReadyEvents, recordSettleFailure, type ClaimedEvent, type EventClaim, type LockedEvent } from '../queue/index.js';
import { DEFAULT_CONFIG, type Config } from '../config/index.js';
import { isPermanent, settleRetry } from './retry-policy.js';
import { prepareUsage } from './usage-fetch.js';

/** How a claimed event is settled, by a worker or a repair: the settle path's knobs, handed down by the command. */
export interface SettleSettings {
  /** attempts before an event is dead-lettered (TALLY_MAX_ATTEMPTS) */
  readonly maxAttempts: number;
  /** how long one usage fetch from a provider's API may take (TALLY_USAGE_FETCH_TIMEOUT_MS) */
  readonly usageFetchTimeoutMs: number;
}

/** The settle settings from the configuration. */
export function settleSettings(config: Pick<Config, 'maxAttempts' | 'usageFetchTimeoutMs'>): SettleSettings {
  return { maxAttempts: config.maxAttempts, usageFetchTimeoutMs: config.usageFetchTimeoutMs };
}

/** What a caller that hands none settles with: every setting's default. */
export const DEFAULT_SETTLE_SETTINGS: SettleSettings = settleSettings(DEFAULT_CONFIG);

export type EventOutcome =
  | { kind: 'settled'; result: SettleResult }
  | { kind: 'retry'; error: Error }
  | { kind: 'dead'; error: Error }
  | { kind: 'lease_lost' }
  /** the provider's object is not this job's: recorded as event_mismatch, nothing billed */
  | { kind: 'usage_mismatch'; field: 'id' | 'model' };

/**
 * Settles one claimed event and records what happened to it. The outcome is written
 * by settle() in its own transaction, fenced by the claim's token; failures put the
 * event back with backoff, or dead-letter it.
 */
export async function settleEvent(pool: Pool, claim: ClaimedEvent, settings: SettleSettings = DEFAULT_SETTLE_SETTINGS): Promise<EventOutcome> {
  try {
    let event: LifecycleEvent;
    if (claim.event.fetch_usage) {
      // Named adapters without usage in the webhook: fetch it first (worker/usage-fetch.ts).
      // A fetch failure is rescheduled there, apart from settle attempts: it never dead-letters.
      const step = await prepareUsage(pool, claim, settings.usageFetchTimeoutMs);
      if (step.kind === 'retry') return { kind: 'retry', error: step.error };
      if (step.kind === 'mismatch') return { kind: 'usage_mismatch', field: step.field };
      if (step.kind === 'lease_lost') return { kind: 'lease_lost' };
      event = step.event;
    } else {
      event = claimedLifecycleEvent(claim);
    }
    const result = await settle(pool, { jobId: claim.job_id, event, claim: claimOf(claim) });
    failpoint('worker.after_commit');
    return { kind: 'settled', result };
  } catch (error) {
    if (error instanceof LeaseLost) return { kind: 'lease_lost' };
    const err = error instanceof Error ? error : new Error(String(error));
    const message = `${err.name}: ${err.message}`;
    // claim.attempts counts this attempt (the claim started it). The write is fenced: a
    // claim another worker has taken over records nothing and is reported lost — its
    // failure is not the event's attempt (issue 11.5).
    const next = await recordSettleFailure(
      pool,
      claim,
      settleRetry(settings.maxAttempts),
      { attempts: claim.attempts, permanent: isPermanent(err) },
      message,
    );
    return next.kind === 'lease_lost' ? { kind: 'lease_lost' } : { kind: next.kind, error: err };
  }
}

/**
 * Settles several claimed events (of different jobs) in one transaction. Events whose
 * usage must still be fetched, and every event of a batch that fails as a whole, go
 * through settleEvent() one by one — where each failure is retried or dead-lettered on
 * its own. Outcomes are returned in the order of `claims`.
 */
export async function settleEvents(
  pool: Pool,
  claims: ClaimedEvent[],
  settings: SettleSettings = DEFAULT_SETTLE_SETTINGS,
): Promise<EventOutcome[]> {
  const outcomes = new Map<ClaimedEvent, EventOutcome>();
  const batchable: { claim: ClaimedEvent; event: LifecycleEvent }[] = [];
  for (const claim of claims) {
    const event = eventInHand(claim);
    if (event) batchable.push({ claim, event });
    else outcomes.set(claim, await settleEvent(pool, claim, settings));
  }
  if (batchable.length > 0) {
    try {
      const results = await settleBatch(
        pool,
        batchable.map(({ claim, event }) => ({ jobId: claim.job_id, event, claim: claimOf(claim) })),
      );
      failpoint('worker.after_commit');
      batchable.forEach(({ claim }, i) => outcomes.set(claim, { kind: 'settled', result: results[i]! }));
    } catch (error) {
      // A COMMIT whose answer was lost is read back by settleBatch: a committed batch
      // returns its results above. Lost and unreadable (the database gone): the outcome
      // is unknown and nothing is recorded; the worker lets the leases lapse, and the
      // next claim finds each event settled or not.
      if (error instanceof OutcomeUnknown) throw error;
      // Anything else rolled the whole batch back: each event is settled on its own,
      // where its failure stays its own.
      for (const { claim } of batchable) outcomes.set(claim, await settleEvent(pool, claim, settings));
    }
  }
  return claims.map((claim) => outcomes.get(claim)!);
}

/** What settleReadyEvents did: the events it settled, and whether it left any for a leased claim. */
export interface ReadyBatch {
  claims: ClaimedEvent[];
  outcomes: EventOutcome[];
  /** locked events this transaction could not finish (retries, lapsed claims, usage fetches): claim them next */
  leftForLease: boolean;
}

/**
 * An event's first attempt, settled in the transaction that takes it: the ready events of
 * one tenant are locked (lockReadyEvents), those on their first attempt that need nothing
 * from outside are settled there and then, and one COMMIT writes each of them once — no
 * lease, no claim's write, no second commit (docs/ARCHITECTURE.md "Workers"). The rest —
 * a retry, a lapsed claim, a usage to fetch, an event that cannot be read — need a lease
 * and a record of each failure: they are only left unlocked (`leftForLease`). Anything
 * that fails rolls the whole transaction back, events untouched, and is thrown: the
 * caller then takes them with a leased claim, where each failure is its own.
 */
export async function settleReadyEvents(pool: Pool, limit: number): Promise<ReadyBatch> {
  let leftForLease = false;
  let rowOf = new Map<EventClaim, LockedEvent>();
  const taken = await settleTaken(pool, async (tx) => {
    rowOf = new Map();
    const locked = await lockReadyEvents(tx, limit);
    failpoint('worker.after_claim');
    const settleable = locked.flatMap((row) => {
      const event = firstAttempt(row);
      return event ? [{ row, event }] : [];
    });
    leftForLease = settleable.length < locked.length;
    return settleable.map(({ row, event }) => {
      const claim = claimOf(row);
      rowOf.set(claim, row);
      return { jobId: row.job_id, event, claim };
    });
  });
  // Reported as the leased claim would be: its attempts count this one (the mark counted it).
  const claims = taken.requests.map((r) => {
    const row = rowOf.get(r.claim)!;
    return { ...row, attempts: row.attempts + 1 };
  });
  return { claims, outcomes: taken.results.map((result): EventOutcome => ({ kind: 'settled', result })), leftForLease };
}

/**
 * The lifecycle event of a locked event this transaction may finish: pending on its
 * first attempt, no lease, its usage in hand; null for any other (a leased claim's).
 */
function firstAttempt(row: LockedEvent): LifecycleEvent | null {
  if (row.claim_state !== 'pending' || row.attempts !== 0 || row.claim_lease !== null) return null;
  return eventInHand(row);
}

/**
 * The lifecycle event of a claimed event that needs nothing from outside to settle: its
 * usage in hand (in the webhook, or fetched already) and readable; null otherwise —
 * settleEvent() then fetches the usage, or dead-letters the event with the reason.
 */
function eventInHand(claim: ClaimedEvent): LifecycleEvent | null {
  if (claim.event.fetch_usage && claim.usage === null) return null;
  try {
    return claimedLifecycleEvent(claim);
  } catch {
    return null;
  }
}
