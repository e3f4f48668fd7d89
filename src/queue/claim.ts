import type { Queryable } from '../db/pool.js';
import { processConfig } from '../config/index.js';
import { unsettledSql } from './states.js';
import type { ClaimedEvent } from './types.js';

/**
 * How long a claim is its worker's. A dead worker's claims stay unavailable this long; a
 * live worker extends its claims every third of it (worker/lease-keeper.ts), so it must
 * be longer than the statement timeout, not than a whole claim's work.
 */
export const DEFAULT_LEASE_SECONDS = processConfig().leaseSeconds; // TALLY_LEASE_SECONDS

const CLAIMED_COLUMNS = 'w.provider, w.event_key, w.tenant_id, w.job_id, w.seq, w.type, w.event, w.usage, w.attempts, w.fencing_token';

/**
 * THE claim, written once; `which` narrows the events it may take. An event is claimable
 * when it is unsettled, its claim's lease (if any) ran out, and no earlier event of the
 * same job is still unsettled: a job's events settle in the order intake numbered them,
 * and one waiting in backoff holds back only its own job. FOR UPDATE SKIP LOCKED: workers
 * never wait on each other. Each claim takes a fresh fencing token from a sequence.
 *
 * `attempts` counts settlement attempts, and a claim starts one only when it takes a
 * pending event. Taking over a 'processing' event whose lease ran out continues the
 * attempt its lost holder never finished: a lost claim is not an attempt, so claims lost
 * to a slow step (or a dead worker) can never add up to a dead letter (issue 11.5). An
 * attempt ends as a success, a fenced scheduleRetry or a fenced deadLetter.
 *
 * The `= any (array(…))` pair repeats the join (it changes no row): it lets the update
 * find its rows by the primary key whatever the planner guesses of `ready`. A prepared
 * statement (the claims are) may run a generic plan; one where the limit was a parameter,
 * guessed as a tenth of the ready events, on the join alone hashed `ready` against a
 * sequential scan of the whole table, every event ever received (84 ms at a backlog of
 * 100,000, growing with the table; bench/claim-explain.ts). The arrays are an index
 * condition instead: the providers × event keys of the batch, about the batch's size.
 */
function claimStatement(which: string, limit: string, lease: string): string {
  return `with ready as (
       select e.provider, e.event_key
       from webhook_events e
       where ${unsettledSql('e')}
         and ${which}
         and (e.lease_until is null or e.lease_until < now())
         and not exists (
           select 1 from webhook_events earlier
           where earlier.job_id = e.job_id and earlier.seq < e.seq and ${unsettledSql('earlier')})
       order by e.run_after, e.seq
       limit ${limit}
       for update of e skip locked
     )
     update webhook_events w
     set state = 'processing', lease_until = now() + make_interval(secs => ${lease}), fencing_token = nextval('fencing_tokens'),
         attempts = w.attempts + case when w.state = 'pending' then 1 else 0 end
     from ready
     where w.provider = ready.provider and w.event_key = ready.event_key
       and w.provider = any (array(select provider from ready)) and w.event_key = any (array(select event_key from ready))
     returning ${CLAIMED_COLUMNS}`;
}

/**
 * Events whose run_after has come: what workers take, `limit` at most ($1: lease seconds;
 * bench/claim-explain.ts EXPLAINs it). The limit is written into the statement, so that
 * any plan of it knows the limit is small (bench/RESULTS.md).
 */
export function claimReadyStatement(limit: number): string {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`a claim takes at least one event; got ${limit}`);
  return claimStatement('e.run_after <= now()', String(limit), '$1');
}
/** One named event, in backoff or not: what an operator's re-drive takes. */
const CLAIM_NAMED = claimStatement('e.provider = $2 and e.event_key = $3', '1', '$1');

/**
 * Claims up to `limit` ready events (a worker's loop). Unlike the other hot-path queries
 * it is not a named (prepared) statement: PostgreSQL then plans it on every call, for the
 * table as it is now. A prepared claim keeps the plan it got early, when webhook_events was
 * small, and under a growing live backlog that plan read and sorted every ready event:
 * 140–460 ms per claim at 2,700–6,000 open events, against 1–6 ms planned fresh
 * (bench/RESULTS.md). Planning costs about half a millisecond, once per batch. The index
 * in the claim's order (migrations/0016) makes the early stop the cheap plan either way;
 * test/integration/claim-plan.test.ts checks the shape of both plans.
 */
export async function claimEvents(db: Queryable, limit: number, leaseSeconds: number): Promise<ClaimedEvent[]> {
  const result = await db.query<ClaimedEvent>({ text: claimReadyStatement(limit), values: [leaseSeconds] });
  return result.rows;
}

/**
 * Claims one named event now, whatever its run_after, by the same rule as claimEvents: a
 * live worker's unexpired claim, a settled event or one behind an earlier unsettled event
 * of its job is not taken (null). A dead event is re-queued first (requeueDead).
 */
export async function claimEvent(db: Queryable, provider: string, eventKey: string, leaseSeconds: number): Promise<ClaimedEvent | null> {
  const result = await db.query<ClaimedEvent>({
    name: 'claim_named_event',
    text: CLAIM_NAMED,
    values: [leaseSeconds, provider, eventKey],
  });
  return result.rows[0] ?? null;
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
