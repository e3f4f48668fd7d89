import { Type } from '@sinclair/typebox';
import { isUuid } from '../../ids.js';
import { findJob } from '../../jobs/rows.js';
import { loadJobDetails } from '../../jobs/view.js';
import { settleWithin } from '../../ledger/index.js';
import { resolveException } from '../../reconcile/run.js';
import { requireAccess } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { runIdempotent } from '../idempotency.js';
import { IdParams, RequiredIdempotencyHeader, Usage, bearerAuth, errors } from '../schemas.js';
import { jobView } from '../views.js';
import { JobView } from '../view-schemas.js';

const OperatorAdjustment = Type.Object({
  usage: Usage,
  reason: Type.String({
    minLength: 1,
    maxLength: 500,
    description: 'why: kept on the settlement (`reason`: "operator: …") and on the exception it resolves',
  }),
  exception_id: Type.Optional(
    Type.String({ description: 'a reconciliation exception this adjustment settles: resolved in the same transaction' }),
  ),
});

/**
 * POST /v1/jobs/{id}/adjustments — an operator bills what reconciliation showed was not
 * billed (a usage_mismatch: the provider's records say more than Tally charged; a
 * late_success_after_release: work delivered after the hold was released), without
 * forging a provider webhook. The job's total charge is brought to billable(usage) at its
 * pinned price, like a provider's correction, under the next correction number, through
 * the same settlement path and posting kernel (a charge beyond the grants is debt; a
 * refund goes back where the money came from). The effect, its Idempotency-Key answer and
 * the exception's resolution commit together: retried any number of times, it bills once.
 */
export function jobAdjustmentRoutes(app: ApiApp, { pool }: ApiContext): void {
  app.post(
    '/v1/jobs/:id/adjustments',
    {
      onRequest: requireAccess('admin', pool),
      schema: {
        summary:
          "Operator: bill a captured or released job for this usage (its total charge becomes billable(usage) at its pinned price), as the job's next correction; Idempotency-Key required",
        tags: ['admin'],
        security: bearerAuth,
        params: IdParams,
        headers: RequiredIdempotencyHeader,
        body: OperatorAdjustment,
        response: { 201: JobView, ...errors(400, 401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(pool, request, reply, { required: true }, async (tx) => {
        const job = isUuid(request.params.id) ? await findJob(tx, request.params.id) : null;
        if (!job) throw notFound('job');
        const exceptionId = request.body.exception_id;
        if (exceptionId !== undefined && !isUuid(exceptionId)) throw notFound('exception');
        const result = await settleWithin(tx, {
          jobId: job.id,
          event: { type: 'operator.adjusted', usage: request.body.usage, reason: request.body.reason },
        });
        if (result.outcome === 'rejected')
          throw new ApiError(
            409,
            'job_not_terminal',
            `the job is ${result.jobState}: its hold is not resolved yet, and its capture will bill the usage its provider reports`,
          );
        if (exceptionId !== undefined) {
          const note = `adjusted by the operator (${result.settlement?.settlement_key ?? 'no change'}): ${request.body.reason}`;
          if (!(await resolveException(tx, exceptionId, note))) throw notFound('exception');
        }
        const details = await loadJobDetails(tx, (await findJob(tx, job.id))!);
        return { status: 201, body: jobView(details, 'admin') };
      }),
  );
}
