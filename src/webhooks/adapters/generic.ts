import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { MAX_WEBHOOK_JSON_DEPTH, nestsDeeperThan } from '../../json-depth.js';
import { validateUsage } from '../../pricing/index.js';
import { PROVIDER_EVENT_TYPES, type CanonicalEvent } from '../canonical-event.js';
import { invalidPayload } from '../errors.js';
import { describePayloadError } from '../payload-faults.js';
import { verifyStandardWebhook } from '../standard-webhooks.js';
import type { WebhookAdapter } from './adapter.js';

const Identity = Type.String({ minLength: 1, maxLength: 500 });
export const GenericBody = Type.Object({
  type: Type.Union(PROVIDER_EVENT_TYPES.map((t) => Type.Literal(t))),
  timestamp: Type.Optional(Type.String()),
  data: Type.Object({
    job_id: Type.Optional(Identity),
    provider_job_ref: Type.Optional(Identity),
    tenant_id: Type.Optional(Identity),
    model: Type.Optional(Identity),
    currency: Type.Optional(Identity),
    usage: Type.Optional(Type.Unknown()),
    correction: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
  }),
});
const checkBody = TypeCompiler.Compile(GenericBody);

/** CONTRACT.md "The generic provider": Standard Webhooks, the event id is the event key. */
export const genericAdapter: WebhookAdapter = {
  receive(provider, raw, headers): CanonicalEvent {
    const eventKey = verifyStandardWebhook(provider.secrets, raw, headers);
    const body = parseJson(raw);
    if (!checkBody.Check(body)) {
      const first = checkBody.Errors(body).First();
      throw invalidPayload(first ? describePayloadError(first) : 'the body does not match the generic event format');
    }
    return toCanonical(eventKey, body);
  },
};

function toCanonical(eventKey: string, body: Static<typeof GenericBody>): CanonicalEvent {
  const { data, type } = body;
  if (data.job_id === undefined && data.provider_job_ref === undefined) {
    throw invalidPayload('data.job_id or data.provider_job_ref is required');
  }
  let usage;
  try {
    usage = data.usage === undefined || data.usage === null ? undefined : validateUsage(data.usage);
  } catch (error) {
    throw invalidPayload(`data.usage: ${(error as Error).message}`);
  }
  const needsUsage = type === 'job.completed' || type === 'job.usage_corrected';
  if (needsUsage && usage === undefined) throw invalidPayload(`${type} requires data.usage`);
  if (type === 'job.usage_corrected' && data.correction === undefined) throw invalidPayload('job.usage_corrected requires data.correction, a positive integer');
  return {
    eventKey,
    type,
    ...(data.job_id !== undefined ? { jobId: data.job_id } : {}),
    ...(data.provider_job_ref !== undefined ? { providerJobRef: data.provider_job_ref } : {}),
    ...(data.tenant_id !== undefined ? { tenantId: data.tenant_id } : {}),
    ...(data.model !== undefined ? { model: data.model } : {}),
    ...(data.currency !== undefined ? { currency: data.currency } : {}),
    ...(usage !== undefined ? { usage } : {}),
    ...(type === 'job.usage_corrected' ? { correction: data.correction! } : {}),
  };
}

export function parseJson(raw: Buffer): unknown {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw invalidPayload('the body is not valid JSON');
  }
  if (nestsDeeperThan(body, MAX_WEBHOOK_JSON_DEPTH)) throw invalidPayload(`the body nests deeper than ${MAX_WEBHOOK_JSON_DEPTH} levels`);
  return body;
}
