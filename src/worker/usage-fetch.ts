import { backoff } from '../backoff.js';
import type { Pool } from '../db/pool.js';
import { InvalidEventError, type LifecycleEvent } from '../lifecycle/index.js';
import { InvalidUsageError, validateUsage } from '../pricing/index.js';
import { adapterFor } from '../webhooks/adapters/index.js';
import type { UsageReading, UsageTarget } from '../webhooks/usage-source.js';
import { lifecycleEventOf, scheduleFetchRetry, storeFetchedUsage, type ClaimedEvent } from '../queue/index.js';
import { UsageFetchFailed, getJson } from './usage-http.js';
import { beginUsageFetch, recordFetchMismatch, type FetchContext } from './usage-rows.js';
import { DEFAULT_CONFIG } from '../config/index.js';

/**
 * How long one usage fetch may take, by default (CONTRACT: 10 s); the command hands down
 * TALLY_USAGE_FETCH_TIMEOUT_MS (tests) in its SettleSettings (settle-event.ts). The claim
 * lease need not cover it: the worker extends its leases while a fetch runs
 * (worker/lease-keeper.ts).
 */
export const USAGE_FETCH_TIMEOUT_MS = DEFAULT_CONFIG.usageFetchTimeoutMs;

/**
 * Backoff after a failed fetch: the ceiling starts at 1 s and doubles up to 30 s, the delay
 * is uniform in [ceiling/2, ceiling]. With the workers' 1 s polling the first retry comes
 * within 2 s (CONTRACT). Fetch failures never dead-letter the event.
 */
export const USAGE_FETCH_RETRY = {
  baseMs: 1_000,
  capMs: 30_000,
} as const;

export function fetchRetryDelayMs(failures: number, random: () => number = Math.random): number {
  return Math.round(backoff(failures, { floorMs: 'half', firstMs: USAGE_FETCH_RETRY.baseMs, capMs: USAGE_FETCH_RETRY.capMs }, random));
}

/** What to do with a claimed event whose usage comes from the provider's API. */
export type UsageStep =
  | { kind: 'settle'; event: LifecycleEvent }
  | { kind: 'retry'; error: UsageFetchFailed; delayMs: number }
  | { kind: 'mismatch'; field: 'id' | 'model' }
  | { kind: 'lease_lost' };

/**
 * docs/ARCHITECTURE.md "The flow", named adapters: (1) a short fenced transaction moves the job to
 * usage_pending; (2) outside any transaction, GET the provider's object; (3) store its usage
 * on the event, fenced by the claim's token; then the caller settles in the normal short
 * transaction, which reads that usage. A job whose hold is already resolved is not fetched
 * for; an event whose usage was stored by an earlier claim is not fetched again.
 */
export async function prepareUsage(pool: Pool, claim: ClaimedEvent, timeoutMs = USAGE_FETCH_TIMEOUT_MS): Promise<UsageStep> {
  const start = await beginUsageFetch(pool, claim);
  if (start.kind === 'terminal') return { kind: 'settle', event: lifecycleEventOf(claim.event, claim.event_key, { from: 'not_fetched' }) };
  if (start.kind === 'stored')
    return { kind: 'settle', event: lifecycleEventOf(claim.event, claim.event_key, { from: 'fetched', usage: start.usage }) };

  const reading = await fetchUsage(claim, start.context, timeoutMs);
  switch (reading.kind) {
    case 'usage':
      if (!(await storeFetchedUsage(pool, claim, reading.usage))) return { kind: 'lease_lost' };
      return { kind: 'settle', event: lifecycleEventOf(claim.event, claim.event_key, { from: 'fetched', usage: reading.usage }) };
    case 'mismatch':
      await recordFetchMismatch(pool, claim, start.context, reading);
      return { kind: 'mismatch', field: reading.field };
    case 'retry': {
      const error = new UsageFetchFailed(`usage fetch failed (retried with backoff, never dead-lettered): ${reading.why}`);
      const delayMs = fetchRetryDelayMs(start.context.fetchAttempts + 1);
      if (!(await scheduleFetchRetry(pool, claim, delayMs, error.message))) return { kind: 'lease_lost' };
      return { kind: 'retry', error, delayMs };
    }
  }
}

/** The HTTP request and its reading; every failure becomes a 'retry' reading. */
async function fetchUsage(claim: ClaimedEvent, context: FetchContext, timeoutMs: number): Promise<UsageReading> {
  const source = adapterFor(context.kind)?.usage;
  if (!source)
    throw new InvalidEventError(`event ${claim.event_key} needs fetched usage but provider kind ${context.kind} has no usage source`);
  if (context.providerJobRef === null) throw new InvalidEventError(`job ${context.jobId} has no provider_job_ref to fetch usage for`);
  if (context.apiKey === null) {
    return { kind: 'retry', why: `provider ${claim.provider} has no api_key; set it with PATCH /v1/providers/${claim.provider}` };
  }
  const target: UsageTarget = {
    ref: context.providerJobRef,
    model: context.model,
    resource: claim.event.usage_resource,
    baseUrl: context.baseUrl,
    apiKey: context.apiKey,
  };
  try {
    const { url, headers } = source.request(target);
    const body = await getJson(url, headers, timeoutMs);
    const reading = source.read(body, target, claim.event.type === 'job.completed');
    return reading.kind === 'usage' && reading.usage !== null ? { kind: 'usage', usage: validateUsage(reading.usage) } : reading;
  } catch (error) {
    if (error instanceof UsageFetchFailed) return { kind: 'retry', why: error.message };
    if (error instanceof InvalidUsageError) return { kind: 'retry', why: `the answer's usage is not usable: ${error.message}` };
    throw error;
  }
}
