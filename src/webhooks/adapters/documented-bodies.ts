import { Type, type TSchema } from '@sinclair/typebox';
import { STATUS_EVENTS as FAL_STATUSES } from './fal.js';
import { GenericBody } from './generic.js';
import type { ProviderKind } from './index.js';
import { TYPES as OPENAI_TYPES } from './openai.js';
import { STATUS_EVENTS as REPLICATE_STATUSES } from './replicate.js';

/**
 * What each kind of provider POSTs to /v1/webhooks/{provider}, for the OpenAPI document.
 * The route itself reads raw bytes (signatures are over them) and each adapter checks its
 * own format; these schemas are built from the adapters' own tables (and, for the generic
 * kind, from the schema it validates with), so they list what is accepted. Fields not
 * named here are the provider's and are ignored. Keyed by kind: a new kind must say what
 * its webhooks look like.
 */

const STANDARD_WEBHOOKS = 'Signed with Standard Webhooks: headers webhook-id, webhook-timestamp, webhook-signature (v1,<base64 HMAC-SHA256>).';
const literals = (values: string[]) => Type.Union(values.map((v) => Type.Literal(v)));

export const DOCUMENTED_WEBHOOK_BODIES = {
  generic: Type.Composite([GenericBody], {
    title: 'generic',
    description: `The generic provider (docs/providers/generic.md). ${STANDARD_WEBHOOKS} The event key is webhook-id. data names the job by job_id or provider_job_ref; job.completed and job.usage_corrected carry data.usage (non-negative integers per dimension), job.usage_corrected also data.correction.`,
    examples: [{ type: 'job.completed', data: { job_id: '0193b0c4-6d1e-7a51-9f2e-2f1d6e0c9a11', usage: { input_tokens: 1200, output_tokens: 340 } } }],
  }),
  replicate: Type.Object(
    {
      id: Type.String({ description: "the prediction id: the job's provider_job_ref" }),
      status: literals(Object.keys(REPLICATE_STATUSES)),
      model: Type.Optional(Type.String()),
      metrics: Type.Optional(Type.Object({ predict_time: Type.Optional(Type.Number({ description: 'seconds; billed as predict_ms, half-up' })) }, { additionalProperties: true })),
    },
    {
      title: 'replicate',
      additionalProperties: true,
      description: `A Replicate prediction object (docs/providers/replicate.md). ${STANDARD_WEBHOOKS} A succeeded prediction must carry metrics.predict_time.`,
    },
  ),
  openai: Type.Object(
    {
      id: Type.String({ description: 'the webhook event id' }),
      type: literals(Object.keys(OPENAI_TYPES)),
      created_at: Type.Optional(Type.Integer()),
      data: Type.Object({ id: Type.String({ description: "the batch or response id: the job's provider_job_ref" }) }, { additionalProperties: true }),
    },
    {
      title: 'openai',
      additionalProperties: true,
      description: `An OpenAI webhook event (docs/providers/openai.md). ${STANDARD_WEBHOOKS} It carries no usage: Tally fetches the batch or response with the provider's api_key.`,
    },
  ),
  fal: Type.Object(
    {
      request_id: Type.String({ description: "the job's provider_job_ref" }),
      status: literals(Object.keys(FAL_STATUSES)),
      payload: Type.Optional(Type.Unknown()),
    },
    {
      title: 'fal',
      additionalProperties: true,
      description:
        'A fal queue webhook (docs/providers/fal.md), signed with Ed25519: headers x-fal-webhook-request-id, x-fal-webhook-user-id, x-fal-webhook-timestamp, x-fal-webhook-signature, checked against the provider\'s JWKS. Usage is fetched from fal with the provider\'s api_key.',
    },
  ),
} satisfies Record<ProviderKind, TSchema>;
