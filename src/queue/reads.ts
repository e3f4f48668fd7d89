import type { Queryable } from '../db/pool.js';
import { awaitingSql, type EventState } from './states.js';

/**
 * The state of the job's first event still awaiting settlement (pending, claimed or
 * dead), or null. The settle transaction asks under the job's row lock: intake numbers
 * a job's events under that same lock, so none can be accepted between this read and
 * the write that depends on it.
 */
export async function awaitingEventOf(db: Queryable, jobId: string): Promise<EventState | null> {
  const result = await db.query<{ state: EventState }>({
    name: 'awaiting_event_of_job',
    text: `select state from webhook_events where job_id = $1 and ${awaitingSql()} order by seq limit 1`,
    values: [jobId],
  });
  return result.rows[0]?.state ?? null;
}

/** Of `jobIds`, those with an event still awaiting settlement (awaitingEventOf, for many jobs in one statement). */
export async function jobsWithAwaitingEvents(db: Queryable, jobIds: readonly string[]): Promise<Set<string>> {
  if (jobIds.length === 0) return new Set();
  const result = await db.query<{ job_id: string }>({
    name: 'jobs_with_awaiting_events',
    text: `select distinct job_id from webhook_events where job_id = any($1::uuid[]) and ${awaitingSql()}`,
    values: [jobIds],
  });
  return new Set(result.rows.map((r) => r.job_id));
}
