import type { Pool, Queryable } from '../db/pool.js';
import { withTransaction } from '../db/transaction.js';
import { lockJob, writeJobs } from '../ledger/index.js';
import { decide } from '../lifecycle/index.js';
import type { ProviderKind } from '../webhooks/adapters/index.js';
import { newId } from '../ids.js';
import type { Usage } from '../pricing/index.js';
import { eventLeaseLost, insertDeliveryAttempt, markSettled, readOwnedEvent, type ClaimedEvent } from '../queue/index.js';

/** What the worker needs to fetch a job's usage: read under the job lock, used after commit. */
export interface FetchContext {
  jobId: string;
  model: string;
  providerJobRef: string | null;
  kind: ProviderKind;
  apiKey: string | null;
  baseUrl: string | null;
  fetchAttempts: number;
  payloadHash: Buffer;
}

export type FetchStart =
  | { kind: 'fetch'; context: FetchContext }
  /** fetched by an earlier claim; `usage` null when the provider reported none */
  | { kind: 'stored'; usage: Usage | null }
  /** the hold is resolved already: the event settles as a no-op without a fetch */
  | { kind: 'terminal' };

/**
 * The short transaction before a fetch: lock the job, check the claim is still ours, and
 * write what decide() makes of `usage.fetch_started` (the job waits in usage_pending,
 * remembering where it was). Commits before any HTTP request.
 */
export async function beginUsageFetch(pool: Pool, claim: ClaimedEvent): Promise<FetchStart> {
  return withTransaction(pool, async (tx) => {
    const job = await lockJob(tx, claim.job_id);
    const event = await readOwnedEvent(tx, claim);
    if (!job || !event) throw eventLeaseLost(claim.provider, claim.event_key);
    if (event.usage_fetched_at !== null) return { kind: 'stored', usage: event.usage };
    const decision = decide(job.view, { type: 'usage.fetch_started' }, job.policy);
    // Nothing is fetched for a job whose hold is resolved: its event settles as no effect.
    if (decision.outcome.status === 'no_effect') return { kind: 'terminal' };
    await writeJobs(tx, [{ job, decision }]);
    const provider = await fetchTarget(tx, job.row.provider);
    return {
      kind: 'fetch',
      context: {
        jobId: claim.job_id,
        model: job.row.model,
        providerJobRef: job.row.provider_job_ref,
        ...provider,
        fetchAttempts: event.fetch_attempts,
        payloadHash: event.payload_hash,
      },
    };
  });
}

async function fetchTarget(db: Queryable, provider: string): Promise<Pick<FetchContext, 'kind' | 'apiKey' | 'baseUrl'>> {
  const result = await db.query<{ kind: ProviderKind; api_key: string | null; base_url: string | null }>(
    'select kind, api_key, base_url from providers where name = $1',
    [provider],
  );
  const row = result.rows[0]!;
  return { kind: row.kind, apiKey: row.api_key, baseUrl: row.base_url };
}

export interface FetchMismatch {
  field: 'id' | 'model';
  expected: string;
  got: string;
}

/**
 * The fetched object is not this job's: in one short transaction, write what decide()
 * makes of `usage.mismatched` (nothing billed, the hold open, the job back where it was),
 * mark the event no_effect with that reason, and record the attempt as event_mismatch
 * (reconciliation reports it).
 */
export async function recordFetchMismatch(pool: Pool, claim: ClaimedEvent, context: FetchContext, mismatch: FetchMismatch): Promise<void> {
  await withTransaction(pool, async (tx) => {
    const job = await lockJob(tx, claim.job_id);
    if (!job) throw eventLeaseLost(claim.provider, claim.event_key);
    const decision = decide(job.view, { type: 'usage.mismatched' }, job.policy);
    await markSettled(tx, claim, {
      status: decision.outcome.status,
      reason: decision.outcome.reason ?? null,
      settlementKey: null,
      note: `the fetched object's ${mismatch.field} is ${JSON.stringify(mismatch.got)}, the job's is ${JSON.stringify(mismatch.expected)}`,
    });
    await insertDeliveryAttempt(tx, {
      id: newId(),
      provider: claim.provider,
      eventKey: claim.event_key,
      jobId: claim.job_id,
      tenantId: claim.tenant_id,
      outcome: 'event_mismatch',
      payloadHash: context.payloadHash,
      detail: { mismatch: mismatch.field, source: 'usage_fetch', expected: mismatch.expected, got: mismatch.got },
    });
    await writeJobs(tx, [{ job, decision }]);
  });
}
