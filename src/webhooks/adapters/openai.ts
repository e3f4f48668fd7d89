import type { Usage } from '../../pricing/index.js';
import type { CanonicalEvent, ProviderEventType } from '../canonical-event.js';
import { invalidPayload } from '../errors.js';
import { verifyStandardWebhook } from '../standard-webhooks.js';
import { isRecord, joinUrl, type UsageReading, type UsageSource } from '../usage-source.js';
import type { WebhookAdapter } from './adapter.js';
import { parseJson } from './generic.js';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com';

type Resource = 'responses' | 'batches';

/** Webhook type → lifecycle event and the API resource that holds the usage (docs/providers/openai.md). */
export const TYPES: Record<string, { type: ProviderEventType; resource: Resource }> = {
  'response.completed': { type: 'job.completed', resource: 'responses' },
  'response.incomplete': { type: 'job.completed', resource: 'responses' },
  'response.failed': { type: 'job.failed', resource: 'responses' },
  'response.cancelled': { type: 'job.canceled', resource: 'responses' },
  'batch.completed': { type: 'job.completed', resource: 'batches' },
  'batch.failed': { type: 'job.failed', resource: 'batches' },
  'batch.expired': { type: 'job.failed', resource: 'batches' },
  'batch.cancelled': { type: 'job.canceled', resource: 'batches' },
};

/** Statuses of an object that is not finished yet: its usage is not final. */
const UNFINISHED = new Set(['queued', 'in_progress', 'validating', 'finalizing', 'cancelling']);

/**
 * OpenAI (CONTRACT.md "Named provider adapters"): Standard Webhooks, `webhook-id` is the
 * event key, the body is `{id, type, created_at, data: {id}}` with no usage: `data.id`
 * (a response or batch id) is the job's provider_job_ref, and the worker fetches the
 * usage from the object before settling.
 */
export const openaiAdapter: WebhookAdapter = {
  receive(provider, raw, headers): CanonicalEvent {
    const eventKey = verifyStandardWebhook(provider.secrets, raw, headers);
    const body = parseJson(raw);
    if (!isRecord(body)) throw invalidPayload('the body must be an OpenAI webhook event object');
    const mapped = typeof body['type'] === 'string' ? TYPES[body['type']] : undefined;
    if (!mapped) throw invalidPayload(`type must be one of ${Object.keys(TYPES).join(', ')}, got ${JSON.stringify(body['type'])}`);
    const data = body['data'];
    const id = isRecord(data) ? data['id'] : undefined;
    if (typeof id !== 'string' || id.length === 0 || id.length > 500) throw invalidPayload('data.id must be a string of 1 to 500 characters');
    return { eventKey, type: mapped.type, providerJobRef: id, fetchUsage: true, usageResource: mapped.resource };
  },

  usage: {
    request(target) {
      const resource: Resource = target.resource === 'batches' ? 'batches' : 'responses';
      return {
        url: joinUrl(target.baseUrl ?? OPENAI_DEFAULT_BASE_URL, `v1/${resource}/${encodeURIComponent(target.ref)}`),
        headers: { authorization: `Bearer ${target.apiKey}`, accept: 'application/json' },
      };
    },

    read(body, target, completion): UsageReading {
      if (!isRecord(body)) return { kind: 'retry', why: 'the answer is not a JSON object' };
      if (typeof body['id'] !== 'string') return { kind: 'retry', why: 'the answer has no id' };
      if (body['id'] !== target.ref) return { kind: 'mismatch', field: 'id', expected: target.ref, got: body['id'] };
      const model = body['model'];
      if (typeof model === 'string' && !sameModel(target.model, model)) return { kind: 'mismatch', field: 'model', expected: target.model, got: model };
      const status = body['status'];
      if (typeof status === 'string' && UNFINISHED.has(status)) return { kind: 'retry', why: `the object is still ${status}` };
      const usage = body['usage'];
      if (usage === undefined || usage === null) {
        return completion ? { kind: 'retry', why: 'the completed object reports no usage yet' } : { kind: 'usage', usage: null };
      }
      return tokenUsage(usage);
    },
  },
};

/**
 * The job's model, or the dated snapshot OpenAI reports for it: a job priced as
 * `gpt-4o` runs as `gpt-4o-2024-08-06`. Anything else is another model.
 */
export function sameModel(jobModel: string, reported: string): boolean {
  return reported === jobModel || (reported.startsWith(`${jobModel}-`) && /^\d{4}-\d{2}-\d{2}$/.test(reported.slice(jobModel.length + 1)));
}

/** `usage` of a response or batch → input (uncached), cached input and output tokens. */
function tokenUsage(usage: unknown): UsageReading {
  if (!isRecord(usage)) return { kind: 'retry', why: 'usage is not an object' };
  const input = usage['input_tokens'];
  const output = usage['output_tokens'];
  const details = usage['input_tokens_details'];
  const cached = isRecord(details) && details['cached_tokens'] !== undefined && details['cached_tokens'] !== null ? details['cached_tokens'] : 0;
  if (!count(input) || !count(output) || !count(cached)) {
    return { kind: 'retry', why: 'usage.input_tokens, usage.output_tokens and input_tokens_details.cached_tokens must be non-negative integers' };
  }
  if (cached > input) return { kind: 'retry', why: 'usage reports more cached input tokens than input tokens' };
  const result: Usage = { input_tokens: input - cached, cached_input_tokens: cached, output_tokens: output };
  return { kind: 'usage', usage: result };
}

function count(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
