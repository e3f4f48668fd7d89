import type { Usage } from '../../pricing/index.js';
import type { CanonicalEvent, ProviderEventType } from '../canonical-event.js';
import { invalidPayload } from '../errors.js';
import { verifyStandardWebhook } from '../standard-webhooks.js';
import { isRecord } from '../usage-source.js';
import type { WebhookAdapter } from './adapter.js';
import { parseJson } from './generic.js';
import { InvalidDurationError, secondsToMilliseconds } from './milliseconds.js';

/** Prediction status → lifecycle event (docs/providers/replicate.md). */
export const STATUS_EVENTS: Record<string, ProviderEventType> = {
  starting: 'job.started',
  processing: 'job.started',
  succeeded: 'job.completed',
  failed: 'job.failed',
  canceled: 'job.canceled',
};

/**
 * Replicate (CONTRACT.md "Named provider adapters"): Standard Webhooks, `webhook-id` is
 * the event key, the body is the prediction itself. Its `id` is the job's
 * provider_job_ref; `model`, when present, must be the job's model. Billable time is
 * `metrics.predict_time` seconds → `predict_ms`, converted exactly (milliseconds.ts).
 */
export const replicateAdapter: WebhookAdapter = {
  receive(provider, raw, headers): CanonicalEvent {
    const eventKey = verifyStandardWebhook(provider.secrets, raw, headers);
    const prediction = parseJson(raw);
    if (!isRecord(prediction)) throw invalidPayload('the body must be a Replicate prediction object');
    const id = identity(prediction['id'], 'id');
    const status = prediction['status'];
    const type = typeof status === 'string' ? STATUS_EVENTS[status] : undefined;
    if (type === undefined) {
      throw invalidPayload(`status must be one of ${Object.keys(STATUS_EVENTS).join(', ')}, got ${JSON.stringify(status)}`);
    }
    const model = prediction['model'] === undefined || prediction['model'] === null ? undefined : identity(prediction['model'], 'model');
    const usage = type === 'job.started' ? undefined : predictUsage(prediction['metrics']);
    if (type === 'job.completed' && usage === undefined) {
      throw invalidPayload('a succeeded prediction must report metrics.predict_time; it was not accepted, so nothing is billed until it does');
    }
    return {
      eventKey,
      type,
      providerJobRef: id,
      ...(model !== undefined ? { model } : {}),
      ...(usage !== undefined ? { usage } : {}),
    };
  },
};

/** `metrics.predict_time` → {predict_ms}; absent or `{}` (failed, canceled) → no usage. */
function predictUsage(metrics: unknown): Usage | undefined {
  if (metrics === undefined || metrics === null) return undefined;
  if (!isRecord(metrics)) throw invalidPayload('metrics must be an object');
  const seconds = metrics['predict_time'];
  if (seconds === undefined || seconds === null) return undefined;
  try {
    return { predict_ms: secondsToMilliseconds(seconds, 'metrics.predict_time') };
  } catch (error) {
    if (error instanceof InvalidDurationError) throw invalidPayload(error.message);
    throw error;
  }
}

function identity(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 500) {
    throw invalidPayload(`${field} must be a string of 1 to 500 characters`);
  }
  return value;
}
