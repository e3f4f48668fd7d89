import type { Queryable } from '../db/pool.js';
import type { StoredEvent } from './types.js';

/**
 * An accepted delivery, to be put in the outbox. Its row is also the record of the
 * delivery (key, job, tenant, payload hash, received_at): it gets no delivery attempt.
 */
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

/** A delivery attempt recorded on its own: a repeat, a conflict or a mismatch. */
export interface AttemptRecord {
  id: string;
  provider: string;
  eventKey: string;
  jobId: string | null;
  outcome: 'already_accepted' | 'event_key_conflict' | 'event_mismatch';
  payloadHash: Buffer;
  detail: Record<string, unknown> | null;
  /**
   * The job's tenant (delivery_attempts is distributed by it: docs/operations/scaling.md).
   * When a caller leaves it out, the statement reads it from the job.
   */
  tenantId?: string;
}

/**
 * A group of deliveries in ONE statement, so one round trip and one commit however
 * many it holds (intake's group commit, src/intake/group-commit.ts). The accepted events
 * are numbered under their jobs' row locks (the UPDATE of jobs.event_seq, each job once,
 * by as many as it has events here, locked in id order): the per-job sequence is commit
 * order. An accepted event's row is also the record of its delivery (the job view reads
 * accepted deliveries from webhook_events, src/jobs/view.ts), so it gets no attempt row:
 * only the attempts given — repeats, conflicts, mismatches — go to delivery_attempts
 * (migration 0026).
 *
 * An event is written only with the claim of its key (webhook_event_keys, migration 0029),
 * inserted by the same statement: keys are unique per provider across tenants, which
 * webhook_events_pkey — (provider, event_key, tenant_id), for Citus — cannot say. A key a
 * concurrent delivery claimed waits for that delivery's commit on the claim's primary key,
 * then is skipped, and its event with it, whether the two name one tenant's jobs or two
 * tenants' (that primary key and no other: any other constraint is an error, and fails the
 * group). The claims are taken in key order, and after every job lock of the statement (the
 * ORDER BY reads every numbered row first), so two groups never wait for each other's
 * claims in a cycle. Events are keyed by their key and attempts by their own id, so
 * writing a group again after a commit whose answer was lost writes nothing twice. Returns
 * the keys of the events inserted; the caller wakes the workers after the commit. Events
 * must have distinct keys.
 *
 * A group of one tenant's deliveries (every attempt naming its tenant) names that tenant,
 * so on Citus its tenant's rows route to one shard (its claims go to their keys' shards:
 * docs/operations/scaling.md); a group of several tenants spans their shards
 * (docs/operations/scaling.md: intake groups per tenant there), and names each job's
 * tenant beside its id. That also lets PostgreSQL keep one plan of the statement: with
 * jobs found by id alone it planned the statement again at every call, which cost as much
 * as running it (a group of six deliveries of several tenants: 1.6 → 1.2 ms).
 */
export async function persistDeliveries(db: Queryable, events: readonly NewEvent[], attempts: readonly AttemptRecord[]): Promise<Set<string>> {
  const perJob = new Map<string, number>();
  for (const e of events) perJob.set(e.jobId, (perJob.get(e.jobId) ?? 0) + 1);
  const jobIds = [...perJob.keys()].sort();
  const tenantOfJob = new Map(events.map((e) => [e.jobId, e.tenantId]));
  const tenants = new Set([...events.map((e) => e.tenantId), ...attempts.map((a) => a.tenantId)]);
  const tenant = tenants.size === 1 && !tenants.has(undefined) ? [...tenants][0]! : null;
  const result = await db.query<{ provider: string; event_key: string }>({
    name: tenant === null ? 'intake_persist_deliveries' : 'intake_persist_tenant_deliveries',
    text: `with input as (
             select * from unnest($1::text[], $2::text[], $3::uuid[], $4::uuid[], $5::text[], $6::bytea[], $7::bytea[], $8::jsonb[])
               with ordinality as i(provider, event_key, tenant_id, job_id, type, payload_hash, payload, event, ord)
           ), bumped as (
             update jobs j set event_seq = j.event_seq + c.n
             from unnest($9::uuid[], $10::bigint[]${tenant === null ? ', $19::uuid[]' : ''}) as c(job_id, n${tenant === null ? ', tenant_id' : ''})
             where ${tenant === null ? 'j.tenant_id = c.tenant_id' : 'j.tenant_id = $19'} and j.id = c.job_id
             returning j.id, j.event_seq, c.n
           ), numbered as (
             select i.*, b.event_seq - b.n + row_number() over (partition by i.job_id order by i.ord) as seq
             from input i join bumped b on b.id = i.job_id
           ), claimed as (
             insert into webhook_event_keys (provider, event_key, tenant_id)
             select provider, event_key, tenant_id from numbered
             order by provider, event_key
             on conflict on constraint webhook_event_keys_pkey do nothing
             returning provider, event_key
           ), inserted as (
             insert into webhook_events (provider, event_key, tenant_id, job_id, seq, type, payload_hash, payload, event)
             select n.provider, n.event_key, n.tenant_id, n.job_id, n.seq, n.type, n.payload_hash, n.payload, n.event
             from numbered n join claimed c on c.provider = n.provider and c.event_key = n.event_key
             returning provider, event_key
           ), attempts as (
             insert into delivery_attempts (id, provider, event_key, job_id, outcome, payload_hash, detail, tenant_id)
             select a.id, a.provider, a.event_key, a.job_id, a.outcome, a.payload_hash, a.detail,
                    ${tenant === null ? 'coalesce(a.tenant_id, (select j.tenant_id from jobs j where j.id = a.job_id))' : 'a.tenant_id'}
             from unnest($11::uuid[], $12::text[], $13::text[], $14::uuid[], $15::text[], $16::bytea[], $17::jsonb[], $18::uuid[])
                    as a(id, provider, event_key, job_id, outcome, payload_hash, detail, tenant_id)
             on conflict on constraint delivery_attempts_pkey do nothing
           )
           select provider, event_key from inserted`,
    values: [
      events.map((e) => e.provider),
      events.map((e) => e.eventKey),
      events.map((e) => e.tenantId),
      events.map((e) => e.jobId),
      events.map((e) => e.type),
      events.map((e) => e.payloadHash),
      events.map((e) => e.payload),
      events.map((e) => JSON.stringify(e.event)),
      jobIds,
      jobIds.map((id) => perJob.get(id)!),
      attempts.map((a) => a.id),
      attempts.map((a) => a.provider),
      attempts.map((a) => a.eventKey),
      attempts.map((a) => a.jobId),
      attempts.map((a) => a.outcome),
      attempts.map((a) => a.payloadHash),
      attempts.map((a) => (a.detail ? JSON.stringify(a.detail) : null)),
      attempts.map((a) => a.tenantId ?? null),
      tenant === null ? jobIds.map((id) => tenantOfJob.get(id)!) : tenant,
    ],
  });
  return new Set(result.rows.map((r) => deliveryKey(r.provider, r.event_key)));
}

/** One string per (provider, event key), for sets and maps. */
export function deliveryKey(provider: string, eventKey: string): string {
  return JSON.stringify([provider, eventKey]);
}
