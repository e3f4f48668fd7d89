import type { Queryable } from '../db/pool.js';
import type { AttemptRecord } from './enqueue.js';

/**
 * One delivery attempt recorded on its own, in the caller's transaction: the worker's
 * `event_mismatch` when a fetched usage object turns out not to be the job's. Intake's
 * attempts are written with their events by persistDeliveries.
 */
export async function insertDeliveryAttempt(db: Queryable, attempt: AttemptRecord): Promise<void> {
  await db.query(
    // The job's tenant when the caller does not name it (AttemptRecord.tenantId).
    `insert into delivery_attempts (id, provider, event_key, job_id, outcome, payload_hash, detail, tenant_id)
     values ($1, $2, $3, $4, $5, $6, $7, coalesce($8::uuid, (select j.tenant_id from jobs j where j.id = $4)))`,
    [
      attempt.id,
      attempt.provider,
      attempt.eventKey,
      attempt.jobId,
      attempt.outcome,
      attempt.payloadHash,
      attempt.detail ? JSON.stringify(attempt.detail) : null,
      attempt.tenantId ?? null,
    ],
  );
}
