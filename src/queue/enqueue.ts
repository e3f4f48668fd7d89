import type { Pool } from '../db/pool.js';
import { newId } from '../ids.js';
import type { StoredEvent } from './types.js';
import { wakerFor } from './wake.js';

/** An accepted delivery, to be put in the outbox. */
export interface NewEvent {
  provider: string;
  eventKey: string;
  tenantId: string;
  jobId: string;
  type: string;
  payloadHash: Buffer;
  payload: Buffer;
  event: StoredEvent;
}

/**
 * The event and its delivery attempt in ONE statement — so one transaction and one
 * round trip. The event is numbered under the job's row lock (the UPDATE of
 * jobs.event_seq): the per-job sequence is commit order. Returns false when a
 * concurrent delivery of the same key committed first (the intended primary key; any
 * other constraint is an error). Idle workers are woken after the commit.
 */
export async function enqueueEvent(pool: Pool, event: NewEvent): Promise<boolean> {
  const result = await pool.query({
    name: 'intake_persist_event',
    text: `with next as (
             update jobs set event_seq = event_seq + 1 where id = $4 returning event_seq
           ), inserted as (
             insert into webhook_events (provider, event_key, tenant_id, job_id, seq, type, payload_hash, payload, event)
             select $1, $2, $3, $4, next.event_seq, $5, $6, $7, $8 from next
             on conflict on constraint webhook_events_pkey do nothing
             returning job_id
           ), attempt as (
             insert into delivery_attempts (id, provider, event_key, job_id, outcome, payload_hash)
             select $9, $1, $2, job_id, 'accepted', $6 from inserted
           )
           select job_id from inserted`,
    values: [
      event.provider,
      event.eventKey,
      event.tenantId,
      event.jobId,
      event.type,
      event.payloadHash,
      event.payload,
      JSON.stringify(event.event),
      newId(),
    ],
  });
  if (result.rowCount !== 1) return false;
  wakerFor(pool).eventsAccepted();
  return true;
}
