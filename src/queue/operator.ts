import type { Pool, Queryable } from '../db/pool.js';
import { withTransaction } from '../db/transaction.js';
import { notifyWorkers } from './wake.js';

/** The longest note an operator may give (the column's check says the same). */
export const DISCARD_NOTE_MAX_LENGTH = 2000;

/** A dead-lettered event set aside for good: who, when and why. */
export interface DiscardedEvent {
  provider: string;
  event_key: string;
  job_id: string;
  state: 'discarded';
  discarded_by: string;
  discarded_at: Date;
  discard_note: string;
}

export type DiscardResult = DiscardedEvent | 'not_dead' | 'not_found';

/** Why a note cannot be recorded, or null when it can. Shared by the route and the CLI. */
export function discardNoteProblem(note: unknown): string | null {
  if (typeof note !== 'string' || note.trim() === '') return 'a note saying why the event is discarded is required';
  if ([...note].length > DISCARD_NOTE_MAX_LENGTH) return `the note is longer than ${DISCARD_NOTE_MAX_LENGTH} characters`;
  return null;
}

const DISCARDED_COLUMNS = 'provider, event_key, job_id, state, discarded_by, discarded_at, discard_note';

/**
 * Sets a dead-lettered event aside for good. Only a dead event moves, in one conditional
 * update, so a concurrent retry (which also moves only a dead event) and a discard
 * cannot both win. Discarded is terminal — nothing claims, re-queues or re-drives it —
 * so once it commits, the job's hold no longer waits for this event: the cancel-grace
 * duty and the expired-hold repair release it with their normal keyed release.
 *
 * Idempotent: discarding a discarded event answers the first discard's record
 * unchanged (its who, when and why), whatever note the repeat carries.
 */
export async function discardDeadEvent(
  db: Queryable,
  request: { provider: string; eventKey: string; by: string; note: string },
  /** run in the caller's transaction when this call discarded the event (not on an idempotent repeat) */
  onDiscarded?: (event: DiscardedEvent) => Promise<void>,
): Promise<DiscardResult> {
  const discarded = await db.query<DiscardedEvent>(
    `update webhook_events
     set state = 'discarded', reason = 'discarded', lease_until = null,
         discarded_by = $3, discarded_at = now(), discard_note = $4
     where provider = $1 and event_key = $2 and state = 'dead'
     returning ${DISCARDED_COLUMNS}`,
    [request.provider, request.eventKey, request.by, request.note],
  );
  if (discarded.rows[0]) {
    await onDiscarded?.(discarded.rows[0]);
    return discarded.rows[0];
  }
  // Not dead (any more): discarded is terminal, so what we read now is final for it.
  const current = await db.query<DiscardedEvent>(
    `select ${DISCARDED_COLUMNS} from webhook_events where provider = $1 and event_key = $2`,
    [request.provider, request.eventKey],
  );
  const row = current.rows[0];
  if (!row) return 'not_found';
  return row.state === 'discarded' ? row : 'not_dead';
}

/**
 * Puts a dead-lettered event back in the queue with a fresh count of attempts, now. Only
 * a dead event moves, so this and a discard cannot both win. Returns its job, or null
 * when the event is not dead.
 */
export async function requeueDead(db: Queryable, provider: string, eventKey: string): Promise<string | null> {
  const result = await db.query<{ job_id: string }>(
    `update webhook_events
     set state = 'pending', attempts = 0, run_after = now(), last_error = null, reason = null
     where provider = $1 and event_key = $2 and state = 'dead'
     returning job_id`,
    [provider, eventKey],
  );
  return result.rows[0]?.job_id ?? null;
}

/** An operator's retry of a dead letter (POST /v1/events/{provider}/{key}/retry): re-queued, and a worker woken at commit. */
export async function requeueDeadEvent(pool: Pool, provider: string, eventKey: string): Promise<'queued' | 'not_dead' | 'not_found'> {
  const queued = await withTransaction(pool, async (tx) => {
    const jobId = await requeueDead(tx, provider, eventKey);
    if (jobId !== null) await notifyWorkers(tx, jobId);
    return jobId !== null;
  });
  if (queued) return 'queued';
  const exists = await pool.query('select 1 from webhook_events where provider = $1 and event_key = $2', [provider, eventKey]);
  return exists.rowCount === 0 ? 'not_found' : 'not_dead';
}
