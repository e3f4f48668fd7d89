import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Pool, Queryable } from '../db/pool.js';
import { failpoint } from '../failpoints.js';
import { holdsUnstorableText } from '../json-depth.js';
import { isUuid, newId } from '../ids.js';
import type { ProviderRow } from '../catalog/providers.js';
import type { ProviderLookup } from '../catalog/provider-cache.js';
import type { JobRow } from '../jobs/rows.js';
import { adapterFor } from '../webhooks/adapters/index.js';
import { MAX_EVENT_KEY_LENGTH, type CanonicalEvent } from '../webhooks/canonical-event.js';
import { WebhookRefused, type RefusalContext } from '../webhooks/errors.js';
import { storedEventOf, type AttemptRecord } from '../queue/index.js';
import { deliveryWriterFor, type DeliveryWriter } from './delivery-writer.js';

export type IntakeStatus = 'accepted' | 'already_accepted';

export interface IntakeResult {
  status: IntakeStatus;
  eventKey: string;
}

/**
 * The receipt path (docs/ARCHITECTURE.md "Intake and the outbox"): verify on the raw bytes, normalise, resolve
 * the job, check identities, then persist the event — which is also its outbox
 * entry — in one transaction. 200 means durably accepted, not settled. Writes go through
 * `writer` (group-committed with the other deliveries'): the app's, made with the command's
 * limits, or by default the pool's with the default limits.
 */
export async function receiveWebhook(
  pool: Pool,
  providers: ProviderLookup,
  providerName: string,
  raw: Buffer,
  headers: IncomingHttpHeaders,
  writer: DeliveryWriter = deliveryWriterFor(pool),
): Promise<IntakeResult> {
  const provider = await providers.find(providerName);
  if (!provider) throw new WebhookRefused(404, 'not_found', `no provider named ${providerName}`);
  // Filled in as intake learns who the delivery is about; a refusal carries it to its log line.
  const known: RefusalContext = { provider: provider.name };
  try {
    try {
      return await receiveFor(pool, writer, provider, raw, headers, known);
    } catch (error) {
      // A provider kept in memory may predate a rotation another process just committed
      // (its notification still on the way): before refusing a signature, look again.
      // Verification comes first in receiveFor, so nothing was written.
      if (!(error instanceof WebhookRefused && error.code === 'invalid_signature')) throw error;
      const current = await providers.reread(providerName);
      if (!current || JSON.stringify(current) === JSON.stringify(provider)) throw error;
      return await receiveFor(pool, writer, current, raw, headers, known);
    }
  } catch (error) {
    if (error instanceof WebhookRefused) Object.assign(error.context, known);
    throw error;
  }
}

async function receiveFor(
  pool: Pool,
  writer: DeliveryWriter,
  provider: ProviderRow,
  raw: Buffer,
  headers: IncomingHttpHeaders,
  known: RefusalContext,
): Promise<IntakeResult> {
  const adapter = adapterFor(provider.kind);
  if (!adapter) throw new WebhookRefused(501, 'adapter_unavailable', `provider kind ${provider.kind} has no webhook adapter yet`);
  const event = adapter.receive(provider, raw, headers);
  if (event.eventKey.length > MAX_EVENT_KEY_LENGTH) {
    // Refused, not failed: a 5xx would have the provider retry it for days.
    throw new WebhookRefused(400, 'invalid_payload', `the event id (webhook-id) is longer than ${MAX_EVENT_KEY_LENGTH} characters`);
  }
  known.event_id = event.eventKey;
  // Only the canonical event is stored as JSON (the raw body is kept as bytes): text the
  // rest of a provider's body carries, a model's output say, is never a reason to refuse.
  if (holdsUnstorableText(storedEventOf(event))) {
    throw new WebhookRefused(
      400,
      'invalid_payload',
      'the event holds text that is not well-formed Unicode (a lone surrogate) or a NUL character',
    );
  }
  const payloadHash = createHash('sha256').update(raw).digest();

  // A repeat is answered without touching the job row.
  const found = await lookUpDelivery(pool, provider, event);
  if (found.earlier) {
    Object.assign(known, { job_id: found.earlier.job_id, tenant_id: found.earlier.tenant_id });
    return answerRepeat(writer, provider, event, found.earlier, payloadHash);
  }
  const job = found.job;
  if (!job) throw new WebhookRefused(404, 'unknown_job', 'no job of this provider matches data.job_id / data.provider_job_ref');
  Object.assign(known, { job_id: job.id, tenant_id: job.tenant_id });
  const mismatch = mismatchOf(job, event);
  if (mismatch) {
    await recordAttempt(writer, provider.name, event.eventKey, job.id, job.tenant_id, 'event_mismatch', payloadHash, { mismatch });
    throw new WebhookRefused(422, 'event_mismatch', `the event's ${mismatch} does not match the job; nothing was billed`);
  }

  const inserted = await writer.write({
    event: {
      provider: provider.name,
      eventKey: event.eventKey,
      tenantId: job.tenant_id,
      jobId: job.id,
      type: event.type,
      payloadHash,
      payload: raw,
      event: storedEventOf(event),
    },
  });
  if (!inserted) {
    // A concurrent delivery of the same key committed first — for this job or for another
    // tenant's (the key's claim decides, src/queue/enqueue.ts): its event is the answer.
    const first = await findEvent(pool, provider.name, event.eventKey);
    if (!first) {
      // A claim is only ever written with its event; one without is damage, not a repeat.
      throw new Error(`event key ${event.eventKey} of provider ${provider.name} is claimed (webhook_event_keys) but no event holds it`);
    }
    return answerRepeat(writer, provider, event, first, payloadHash);
  }
  failpoint('intake.after_commit');
  return { status: 'accepted', eventKey: event.eventKey };
}

interface StoredEventRow {
  payload_hash: Buffer;
  job_id: string;
  tenant_id: string;
}

async function findEvent(db: Queryable, provider: string, eventKey: string): Promise<StoredEventRow | null> {
  const result = await db.query<StoredEventRow>({
    name: 'intake_find_event',
    text: 'select payload_hash, job_id, tenant_id from webhook_events where provider = $1 and event_key = $2',
    values: [provider, eventKey],
  });
  return result.rows[0] ?? null;
}

/** Same key, same bytes: a duplicate. Same key, other bytes: a conflict, never processed. */
async function answerRepeat(
  writer: DeliveryWriter,
  provider: ProviderRow,
  event: CanonicalEvent,
  earlier: StoredEventRow,
  payloadHash: Buffer,
): Promise<IntakeResult> {
  if (earlier.payload_hash.equals(payloadHash)) {
    await recordAttempt(writer, provider.name, event.eventKey, earlier.job_id, earlier.tenant_id, 'already_accepted', payloadHash);
    return { status: 'already_accepted', eventKey: event.eventKey };
  }
  await recordAttempt(writer, provider.name, event.eventKey, earlier.job_id, earlier.tenant_id, 'event_key_conflict', payloadHash);
  throw new WebhookRefused(
    409,
    'event_key_conflict',
    `event ${event.eventKey} was already accepted with a different payload; this delivery is recorded and will not be processed`,
  );
}

type LookupRow = JobRow & { earlier_payload_hash: Buffer | null; earlier_job_id: string | null; earlier_tenant_id: string | null };

/**
 * The event's earlier delivery, if its key was accepted before; otherwise the job it
 * names (by id or by the provider's reference), if any. One round trip for both.
 */
async function lookUpDelivery(
  db: Queryable,
  provider: ProviderRow,
  event: CanonicalEvent,
): Promise<{ earlier?: StoredEventRow; job?: JobRow }> {
  const byId = event.jobId !== undefined;
  // A job id that is not a UUID names no job (and must not reach a uuid comparison).
  const none = '$3::text is null and false';
  const jobMatch = byId
    ? isUuid(event.jobId!)
      ? 'j.id = $3::uuid'
      : none
    : event.providerJobRef !== undefined
      ? 'j.provider_job_ref = $3'
      : none;
  const result = await db.query<LookupRow>({
    name: `intake_look_up_${byId ? (isUuid(event.jobId!) ? 'by_id' : 'none') : event.providerJobRef !== undefined ? 'by_ref' : 'none'}`,
    text: `select e.payload_hash as earlier_payload_hash, e.job_id as earlier_job_id, e.tenant_id as earlier_tenant_id, j.*
     from (select 1) as one
     left join webhook_events e on e.provider = $1 and e.event_key = $2
     left join jobs j on e.event_key is null and j.provider = $1 and ${jobMatch}`,
    values: [provider.name, event.eventKey, (byId ? event.jobId : event.providerJobRef) ?? null],
  });
  const { earlier_payload_hash, earlier_job_id, earlier_tenant_id, ...job } = result.rows[0]!;
  if (earlier_payload_hash !== null)
    return { earlier: { payload_hash: earlier_payload_hash, job_id: earlier_job_id!, tenant_id: earlier_tenant_id! } };
  return job.id === null ? {} : { job: job as JobRow };
}

/** The first identity the event states that disagrees with the job, if any. */
function mismatchOf(job: JobRow, event: CanonicalEvent): string | null {
  if (event.tenantId !== undefined && event.tenantId !== job.tenant_id) return 'tenant_id';
  if (event.providerJobRef !== undefined && job.provider_job_ref !== null && event.providerJobRef !== job.provider_job_ref)
    return 'provider_job_ref';
  if (event.model !== undefined && event.model !== job.model) return 'model';
  if (event.currency !== undefined && event.currency !== job.currency) return 'currency';
  return null;
}

/** Recorded with the other deliveries of its group (delivery-writer.ts): one commit for all. */
async function recordAttempt(
  writer: DeliveryWriter,
  provider: string,
  eventKey: string,
  jobId: string | null,
  tenantId: string,
  outcome: AttemptRecord['outcome'],
  payloadHash: Buffer,
  detail?: Record<string, unknown>,
): Promise<void> {
  await writer.write({
    attempt: { id: newId(), provider, eventKey, jobId, tenantId, outcome, payloadHash, detail: detail ?? null },
  });
}
