import type { Pool, Queryable } from '../db/pool.js';
import { withTransaction } from '../db/transaction.js';
import { LeaseLost } from '../ledger/errors.js';
import { isTerminal, type JobState } from '../lifecycle/index.js';
import type { ProviderKind } from '../catalog/providers.js';
import { newId } from '../ids.js';
import type { Usage } from '../pricing/index.js';
import type { ClaimedEvent } from './queue.js';

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
 * move the job to usage_pending, remembering where it was (jobs.resume_state). Commits
 * before any HTTP request. A job already usage_pending is this event's own earlier attempt
 * (a job's events settle one at a time, in order), so its resume_state is kept.
 */
export async function beginUsageFetch(pool: Pool, claim: ClaimedEvent): Promise<FetchStart> {
  return withTransaction(pool, async (tx) => {
    const job = await tx.query<{ state: JobState; model: string; provider_job_ref: string | null; kind: ProviderKind; api_key: string | null; base_url: string | null }>(
      `select j.state, j.model, j.provider_job_ref, p.kind, p.api_key, p.base_url
       from jobs j join providers p on p.name = j.provider
       where j.id = $1
       for update of j`,
      [claim.job_id],
    );
    const row = job.rows[0];
    const event = await ownedEvent(tx, claim);
    if (!row || !event) throw new LeaseLost(claim.provider, claim.event_key);
    if (event.usage_fetched_at !== null) return { kind: 'stored', usage: event.usage };
    if (isTerminal(row.state)) return { kind: 'terminal' };
    if (row.state !== 'usage_pending') {
      await tx.query(`update jobs set resume_state = state, state = 'usage_pending', updated_at = now() where id = $1`, [claim.job_id]);
    }
    return {
      kind: 'fetch',
      context: {
        jobId: claim.job_id,
        model: row.model,
        providerJobRef: row.provider_job_ref,
        kind: row.kind,
        apiKey: row.api_key,
        baseUrl: row.base_url,
        fetchAttempts: event.fetch_attempts,
        payloadHash: event.payload_hash,
      },
    };
  });
}

async function ownedEvent(tx: Queryable, claim: ClaimedEvent) {
  const result = await tx.query<{ usage: Usage | null; usage_fetched_at: Date | null; fetch_attempts: number; payload_hash: Buffer }>(
    `select usage, usage_fetched_at, fetch_attempts, payload_hash from webhook_events
     where provider = $1 and event_key = $2 and fencing_token = $3 and state = 'processing'`,
    [claim.provider, claim.event_key, claim.fencing_token.toString()],
  );
  return result.rows[0] ?? null;
}

/** Stores the fetched usage on the event, fenced by the claim's token. False: the claim was lost. */
export async function storeFetchedUsage(db: Queryable, claim: ClaimedEvent, usage: Usage | null): Promise<boolean> {
  const result = await db.query(
    `update webhook_events set usage = $4, usage_fetched_at = now(), last_error = null
     where provider = $1 and event_key = $2 and fencing_token = $3 and state = 'processing'`,
    [claim.provider, claim.event_key, claim.fencing_token.toString(), usage === null ? null : JSON.stringify(usage)],
  );
  return result.rowCount === 1;
}

/**
 * A failed fetch goes back to pending with its own backoff. The claim's attempt is given
 * back (attempts − 1): fetch failures never count towards MAX_SETTLE_ATTEMPTS, so they
 * never dead-letter; an event failing for 5 minutes shows as event_stuck instead.
 */
export async function scheduleFetchRetry(db: Queryable, claim: ClaimedEvent, delayMs: number, error: string): Promise<boolean> {
  const result = await db.query(
    `update webhook_events
     set state = 'pending', run_after = now() + make_interval(secs => $4::float8 / 1000), lease_until = null, last_error = $5,
         attempts = greatest(attempts - 1, 0), fetch_attempts = fetch_attempts + 1
     where provider = $1 and event_key = $2 and fencing_token = $3 and state = 'processing'`,
    [claim.provider, claim.event_key, claim.fencing_token.toString(), delayMs, error.slice(0, 2000)],
  );
  return result.rowCount === 1;
}

export interface FetchMismatch {
  field: 'id' | 'model';
  expected: string;
  got: string;
}

/**
 * The fetched object is not this job's: in one short transaction, record the attempt as
 * event_mismatch (reconciliation reports it), mark the event no_effect with that reason,
 * and put the job back where it was. Nothing is billed; the hold stays open.
 */
export async function recordFetchMismatch(pool: Pool, claim: ClaimedEvent, context: FetchContext, mismatch: FetchMismatch): Promise<void> {
  await withTransaction(pool, async (tx) => {
    await tx.query('select 1 from jobs where id = $1 for update', [claim.job_id]);
    const marked = await tx.query(
      `update webhook_events
       set state = 'no_effect', reason = 'event_mismatch', processed_at = now(), lease_until = null,
           last_error = $4
       where provider = $1 and event_key = $2 and fencing_token = $3 and state = 'processing'`,
      [claim.provider, claim.event_key, claim.fencing_token.toString(), `the fetched object's ${mismatch.field} is ${JSON.stringify(mismatch.got)}, the job's is ${JSON.stringify(mismatch.expected)}`.slice(0, 2000)],
    );
    if (marked.rowCount === 0) throw new LeaseLost(claim.provider, claim.event_key);
    await tx.query(
      `insert into delivery_attempts (id, provider, event_key, job_id, outcome, payload_hash, detail)
       values ($1, $2, $3, $4, 'event_mismatch', $5, $6)`,
      [newId(), claim.provider, claim.event_key, claim.job_id, context.payloadHash, JSON.stringify({ mismatch: mismatch.field, source: 'usage_fetch', expected: mismatch.expected, got: mismatch.got })],
    );
    await tx.query(
      // A tenant's cancel recorded while usage was being fetched still stands.
      `update jobs set state = case when cancel_requested_at is not null and resume_state in ('reserved', 'running')
                                    then 'cancel_requested' else resume_state end,
              resume_state = null, updated_at = now()
       where id = $1 and state = 'usage_pending'`,
      [claim.job_id],
    );
  });
}
