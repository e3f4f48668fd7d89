import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Pool, Queryable } from '../../db/pool.js';
import { isUniqueViolationOn } from '../../db/errors.js';
import { withTransaction } from '../../db/transaction.js';
import { isUuid } from '../../ids.js';
import { MODEL_NAME_MAX_LENGTH, priceVersionNumber } from '../../catalog/prices.js';
import { findProvider } from '../../catalog/providers.js';
import { findJob, type JobRow } from '../../jobs/rows.js';
import { submitJob } from '../../jobs/submit.js';
import { extendJob } from '../../jobs/extend.js';
import { InsufficientFunds } from '../../funds/index.js';
import { loadJobDetails } from '../../jobs/view.js';
import { ProviderJobRefTaken, setProviderJobRef, settle } from '../../ledger/index.js';
import { requireAccess, requireTenant, tenantScope } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { optionalBody } from '../optional-body.js';
import { runIdempotent } from '../idempotency.js';
import { IdParams, Metadata, RequiredIdempotencyHeader, Usage, bearerAuth, errors } from '../schemas.js';
import { jobSummaryView, jobView } from '../views.js';
import { JobSummaryView, JobView } from '../view-schemas.js';
import { visibleWallet } from './wallets.js';

/** The provider's id for the work, at most 500 characters (the column's check says the same). */
const ProviderJobRef = Type.String({ minLength: 1, maxLength: 500 });

const CreateJob = Type.Object({
  // No length limit: a malformed id answers 404 like an unknown one (CONTRACT "HTTP API").
  wallet_id: Type.String(),
  model: Type.String({ minLength: 1, maxLength: MODEL_NAME_MAX_LENGTH }),
  provider: Type.String({ minLength: 1, maxLength: 100 }),
  provider_job_ref: Type.Optional(ProviderJobRef),
  limits: Usage,
  metadata: Type.Optional(Metadata),
  auto_extend: Type.Optional(
    Type.Unsafe<{ step: Record<string, number>; max_limits: Record<string, number> }>({
      type: 'object',
      description:
        "grow the hold by itself while the job runs (docs/long-running-jobs.md): whole `step`s per dimension as progress reports' usage nears the limits, never beyond `max_limits`; checked against the pinned price (422 invalid_limits)",
      properties: {
        step: { type: 'object', additionalProperties: { type: 'integer' }, examples: [{ gpu_seconds: 300 }] },
        max_limits: { type: 'object', additionalProperties: { type: 'integer' }, examples: [{ gpu_seconds: 3600 }] },
      },
      required: ['step', 'max_limits'],
      additionalProperties: false,
    }),
  ),
});
const ExtendJob = Type.Object({
  add: Type.Unsafe<Record<string, number>>({
    type: 'object',
    description:
      "units to add to the job's limits, per dimension: positive integers, dimensions the pinned price bills (checked against the pinned price: 422 invalid_limits otherwise)",
    additionalProperties: true,
    examples: [{ gpu_seconds: 600 }],
  }),
});
const PatchJob = Type.Object({ provider_job_ref: ProviderJobRef });

async function visibleJob(db: Queryable, request: FastifyRequest, id: string): Promise<JobRow> {
  const job = isUuid(id) ? await findJob(db, id, tenantScope(request) ?? undefined) : null;
  if (!job) throw notFound('job');
  return job;
}

/**
 * The job row, its settlements, events and alerts read in ONE snapshot: read one after
 * another, a settlement committing in between showed its event settled beside a job row
 * from before it (an applied correction with no adjustment).
 */
async function fullView(pool: Pool, request: FastifyRequest, job: JobRow) {
  const details = await withTransaction(pool, async (tx) => loadJobDetails(tx, (await findJob(tx, job.id))!), {
    isolation: 'repeatable read',
  });
  return jobView(details, request.principal?.kind === 'admin' ? 'admin' : 'tenant');
}

function refTaken(error: unknown): never {
  if (isUniqueViolationOn(error, 'jobs_provider_job_ref_key') || error instanceof ProviderJobRefTaken) {
    throw new ApiError(409, 'provider_job_ref_taken', 'another job of this provider has this provider_job_ref');
  }
  throw error;
}

export function jobRoutes(app: ApiApp, { pool }: ApiContext): void {
  const tenant = requireAccess('tenant', pool);

  app.post(
    '/v1/jobs',
    {
      onRequest: tenant,
      schema: {
        summary: 'Submit a job: reserves the price of its limits at the current price version, which the job pins',
        tags: ['jobs'],
        security: bearerAuth,
        headers: RequiredIdempotencyHeader,
        body: CreateJob,
        response: { 201: JobSummaryView, ...errors(400, 401, 402, 403, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(pool, request, reply, { required: true }, async (tx) => {
        const tenantId = requireTenant(request);
        const body = request.body;
        const wallet = await visibleWallet(tx, request, body.wallet_id);
        const provider = await findProvider(tx, body.provider);
        if (!provider) throw notFound('provider');
        const job = await submitJob(tx, {
          tenantId,
          wallet,
          provider,
          model: body.model,
          providerJobRef: body.provider_job_ref ?? null,
          limits: body.limits,
          metadata: body.metadata,
          autoExtend: body.auto_extend,
        }).catch(refTaken);
        return { status: 201, body: jobSummaryView(job, await priceVersionNumber(tx, job.price_version_id)) };
      }),
  );

  app.get(
    '/v1/jobs/:id',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: "A job with its settlements and events (a tenant its own; the admin any, with each event's error detail)",
        tags: ['jobs'],
        security: bearerAuth,
        params: IdParams,
        response: { 200: JobView, ...errors(401, 403, 404) },
      },
    },
    async (request) => fullView(pool, request, await visibleJob(pool, request, request.params.id)),
  );

  app.patch(
    '/v1/jobs/:id',
    {
      onRequest: tenant,
      schema: {
        summary: "Set the provider's id for the job, once",
        tags: ['jobs'],
        security: bearerAuth,
        params: IdParams,
        body: PatchJob,
        response: { 200: JobView, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const job = await visibleJob(pool, request, request.params.id);
      const ref = request.body.provider_job_ref;
      const updated = await withTransaction(pool, (tx) =>
        setProviderJobRef(tx, { id: job.id, tenantId: job.tenant_id, provider: job.provider }, ref),
      ).catch(refTaken);
      if (!updated) throw new ApiError(409, 'provider_job_ref_set', "this job's provider_job_ref is already set to another value");
      return fullView(pool, request, updated);
    },
  );

  app.post(
    '/v1/jobs/:id/extensions',
    {
      onRequest: tenant,
      schema: {
        summary:
          "Extend a running job's hold: its limits grow by `add` and its hold by the price difference at the pinned version, as the job's next extension; Idempotency-Key required",
        tags: ['jobs'],
        security: bearerAuth,
        params: IdParams,
        headers: RequiredIdempotencyHeader,
        body: ExtendJob,
        response: { 201: JobView, ...errors(400, 401, 402, 403, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      // A 402 stores nothing under the key, like a 400 or 422: the tenant may fund the wallet and retry it.
      runIdempotent(pool, request, reply, { required: true, notStored: [402] }, async (tx) => {
        const tenantId = requireTenant(request);
        const job = isUuid(request.params.id) ? await findJob(tx, request.params.id, tenantId) : null;
        if (!job) throw notFound('job');
        await extendJob(tx, { tenantId, jobId: job.id, add: request.body.add }).catch((error: unknown) => {
          if (error instanceof InsufficientFunds)
            throw new ApiError(402, 'insufficient_funds', "the wallet's available balance does not cover this extension; nothing was held");
          throw error;
        });
        const details = await loadJobDetails(tx, (await findJob(tx, job.id))!);
        return { status: 201, body: jobView(details, 'tenant') };
      }),
  );

  app.post(
    '/v1/jobs/:id/cancel',
    {
      onRequest: tenant,
      ...optionalBody,
      schema: {
        summary: "Ask to cancel: the hold stays until the provider's terminal event or the cancel grace passes",
        tags: ['jobs'],
        security: bearerAuth,
        params: IdParams,
        response: { 202: JobView, ...errors(401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const job = await visibleJob(pool, request, request.params.id);
      const result = await settle(pool, { jobId: job.id, event: { type: 'cancel.requested' } });
      if (result.outcome === 'rejected') throw new ApiError(409, 'job_terminal', `the job is already ${result.jobState}`);
      const current = (await findJob(pool, job.id))!;
      return reply.code(202).send(await fullView(pool, request, current));
    },
  );
}
