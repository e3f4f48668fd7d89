import type { Usage } from '../pricing/index.js';

/** Provider event types after adapter mapping: the `job.*` events of the lifecycle. */
export type ProviderEventType = 'job.started' | 'job.progress' | 'job.completed' | 'job.failed' | 'job.canceled' | 'job.usage_corrected';

export const PROVIDER_EVENT_TYPES: readonly ProviderEventType[] = [
  'job.started',
  'job.progress',
  'job.completed',
  'job.failed',
  'job.canceled',
  'job.usage_corrected',
];

/** The longest event key stored (webhook_events_event_key_length in 0001_core.sql). */
export const MAX_EVENT_KEY_LENGTH = 500;

/**
 * What every adapter turns a verified delivery into. Identity fields are optional:
 * present ones must match the job. No amount: webhooks never set one.
 */
export interface CanonicalEvent {
  eventKey: string;
  type: ProviderEventType;
  jobId?: string;
  providerJobRef?: string;
  tenantId?: string;
  model?: string;
  currency?: string;
  usage?: Usage;
  correction?: number;
  /** the usage must be fetched from the provider's API before settling (named adapters) */
  fetchUsage?: boolean;
  /** with fetchUsage: the adapter's hint for where (OpenAI: 'batches' or 'responses') */
  usageResource?: string;
}
