import type { Pool, Queryable } from '../db/pool.js';
import { EVENTS_CHANNEL } from '../intake/receive.js';

/** A claimed event: the outbox row plus the fencing token this claim owns. */
export interface ClaimedEvent {
  provider: string;
  event_key: string;
  tenant_id: string;
  job_id: string;
  seq: bigint;
  type: string;
  event: { type: string; usage?: Record<string, number>; correction?: number; fetch_usage?: boolean; usage_resource?: string };
  usage: Record<string, number> | null;
  attempts: number;
  fencing_token: bigint;
}

/**
 * Claims up to `limit` ready events with FOR UPDATE SKIP LOCKED. An event is ready
 * when it is pending (or its claim's lease expired) and its run_after has come, and
 * no earlier event of the same job is still unsettled: a job's events settle in the
 * order intake numbered them, and one waiting in backoff holds back only its own job.
 * Each claim takes a fresh fencing token from a sequence.
 *
 * `attempts` counts settlement attempts, and a claim starts one only when it takes a
 * pending event. Taking over a 'processing' event whose lease ran out continues the
 * attempt its lost holder never finished: a lost claim is not an attempt, so claims lost
 * to a slow step (or a dead worker) can never add up to a dead letter (issue 11.5). An
 * attempt ends as a success, a fenced scheduleRetry or a fenced deadLetter.
 */
export async function claimEvents(db: Queryable, limit: number, leaseSeconds: number): Promise<ClaimedEvent[]> {
  const result = await db.query<ClaimedEvent>({
    name: 'claim_events',
    text: `with ready as (
       select e.provider, e.event_key
       from webhook_events e
       where e.state in ('pending', 'processing')
         and e.run_after <= now()
         and (e.lease_until is null or e.lease_until < now())
         and not exists (
           select 1 from webhook_events earlier
           where earlier.job_id = e.job_id and earlier.seq < e.seq and earlier.state in ('pending', 'processing'))
       order by e.run_after, e.seq
       limit $1
       for update of e skip locked
     )
     update webhook_events w
     set state = 'processing', lease_until = now() + make_interval(secs => $2), fencing_token = nextval('fencing_tokens'),
         attempts = w.attempts + case when w.state = 'pending' then 1 else 0 end
     from ready
     where w.provider = ready.provider and w.event_key = ready.event_key
     returning w.provider, w.event_key, w.tenant_id, w.job_id, w.seq, w.type, w.event, w.usage, w.attempts, w.fencing_token`,
    values: [limit, leaseSeconds],
  });
  return result.rows;
}

/**
 * Pushes the leases of claims still in hand to `leaseSeconds` from now — fenced by each
 * claim's token, so a claim another worker took over is never extended (worker/lease-keeper.ts).
 */
export async function extendLeases(db: Queryable, claims: readonly ClaimedEvent[], leaseSeconds: number): Promise<number> {
  if (claims.length === 0) return 0;
  const result = await db.query({
    name: 'extend_leases',
    // SKIP LOCKED: a row locked now is being written by a settle transaction (ours,
    // marking it; or a new owner's): waiting behind it would hold up every other lease
    // of this beat — until they lapse — and could deadlock with a batch's marks.
    text: `with held as (
       select w.provider, w.event_key from webhook_events w
       join unnest($1::text[], $2::text[], $3::bigint[]) as h(provider, event_key, fencing_token)
         on w.provider = h.provider and w.event_key = h.event_key and w.fencing_token = h.fencing_token
       where w.state = 'processing'
       for no key update of w skip locked
     )
     update webhook_events w
     set lease_until = greatest(w.lease_until, now() + make_interval(secs => $4))
     from held where w.provider = held.provider and w.event_key = held.event_key`,
    values: [claims.map((c) => c.provider), claims.map((c) => c.event_key), claims.map((c) => c.fencing_token.toString()), leaseSeconds],
  });
  return result.rowCount ?? 0;
}

/** Back to pending after a transient failure, if we still own the claim. */
export async function scheduleRetry(db: Queryable, claim: ClaimedEvent, delayMs: number, error: string): Promise<boolean> {
  const result = await db.query(
    `update webhook_events
     set state = 'pending', run_after = now() + make_interval(secs => $4::float8 / 1000), lease_until = null, last_error = $5
     where provider = $1 and event_key = $2 and fencing_token = $3 and state = 'processing'`,
    [claim.provider, claim.event_key, claim.fencing_token.toString(), delayMs, error.slice(0, 2000)],
  );
  return result.rowCount === 1;
}

/** Parks the event for an operator. The job's hold stays open: nothing is dropped. */
export async function deadLetter(db: Queryable, claim: ClaimedEvent, error: string): Promise<boolean> {
  const result = await db.query(
    `update webhook_events
     set state = 'dead', lease_until = null, last_error = $4, reason = 'dead_lettered'
     where provider = $1 and event_key = $2 and fencing_token = $3 and state = 'processing'`,
    [claim.provider, claim.event_key, claim.fencing_token.toString(), error.slice(0, 2000)],
  );
  return result.rowCount === 1;
}

export async function requeueDeadEvent(pool: Pool, provider: string, eventKey: string): Promise<'queued' | 'not_dead' | 'not_found'> {
  const result = await pool.query(
    `with requeued as (
       update webhook_events
       set state = 'pending', attempts = 0, run_after = now(), last_error = null, reason = null
       where provider = $1 and event_key = $2 and state = 'dead'
       returning job_id
     )
     select pg_notify($3, job_id::text) from requeued`,
    [provider, eventKey, EVENTS_CHANNEL],
  );
  if (result.rowCount === 1) return 'queued';
  const exists = await pool.query('select 1 from webhook_events where provider = $1 and event_key = $2', [provider, eventKey]);
  return exists.rowCount === 0 ? 'not_found' : 'not_dead';
}
