import type { Usage } from '../pricing/index.js';

/**
 * Where a named adapter's usage lives when its webhook carries none (OpenAI, fal):
 * which URL to GET and how to read the answer. Pure — the worker does the request,
 * outside any transaction, with a timeout (worker/usage-fetch.ts).
 */
export interface UsageSource {
  request(target: UsageTarget): UsageRequest;
  /** Reads a 200 answer's JSON body. `completion`: the event is a job.completed, which must carry usage. */
  read(body: unknown, target: UsageTarget, completion: boolean): UsageReading;
}

/** What the worker knows when it fetches: the job's identity and the provider's settings. */
export interface UsageTarget {
  /** the job's provider_job_ref: the provider's own id for the work */
  ref: string;
  /** the job's model */
  model: string;
  /** adapter-specific hint stored with the event (OpenAI: 'batches' or 'responses') */
  resource: string | undefined;
  baseUrl: string | null;
  apiKey: string;
}

export interface UsageRequest {
  url: string;
  /** carries the api_key: never logged, never put in an error message */
  headers: Record<string, string>;
}

export type UsageReading =
  /** usage null: the provider reported none (a failed or cancelled job may have none) */
  | { kind: 'usage'; usage: Usage | null }
  /** the object is not this job's: event_mismatch, nothing billed */
  | { kind: 'mismatch'; field: 'id' | 'model'; expected: string; got: string }
  /** not usable yet (unfinished, malformed): fetched again with backoff, never dead-lettered */
  | { kind: 'retry'; why: string };

/** Joins a base URL (with or without a trailing slash) and a path of already-encoded segments. */
export function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
