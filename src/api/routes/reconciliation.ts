import { Type } from '@sinclair/typebox';
import { isUuid } from '../../ids.js';
import { findRun, reconcile, resolveException } from '../../reconcile/run.js';
import { ImportIdReused, InvalidUsageFile, importProviderUsage, validateRecord, type UsageRecord } from '../../reconcile/provider-usage.js';
import { requireAccess } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { optionalBody } from '../optional-body.js';
import { idempotencyKeyOf, runIdempotent } from '../idempotency.js';
import { IdParams, IdempotencyHeader, bearerAuth, errors } from '../schemas.js';
import { ReconciliationExceptionView, ReconciliationRunView } from '../view-schemas.js';

const RunView = ReconciliationRunView;

export function reconciliationRoutes(app: ApiApp, { pool }: ApiContext): void {
  const admin = requireAccess('admin', pool);

  app.post(
    '/v1/reconciliation/runs',
    {
      onRequest: admin,
      ...optionalBody,
      schema: {
        summary: 'Run reconciliation now (optionally repairing through the normal keyed paths)',
        tags: ['admin'],
        security: bearerAuth,
        headers: IdempotencyHeader,
        body: Type.Optional(Type.Object({ repair: Type.Optional(Type.Boolean()) })),
        response: { 201: RunView, ...errors(400, 401, 403, 409, 422) },
      },
    },
    async (request, reply) => {
      // The run uses its own short transactions (and, repairing, settle()'s): it must not
      // sit inside the idempotency transaction, whose connection would idle for the whole
      // run. So it runs first; with an Idempotency-Key whose first answer is stored, that
      // answer is replayed instead (this extra run changed nothing: runs only record, and
      // repairs go through keyed paths that do nothing the second time).
      // A malformed key is refused before anything runs: a refusal stores nothing.
      idempotencyKeyOf(request, false);
      const run = await reconcile(pool, {
        repair: request.body?.repair ?? false,
        repairWith: request.server.apiSettings.repairs,
        log: request.log,
      });
      return runIdempotent(pool, request, reply, { required: false }, async () => ({ status: 201, body: run }));
    },
  );

  app.get(
    '/v1/reconciliation/runs/:id',
    { onRequest: admin, schema: { summary: 'A stored reconciliation run', tags: ['admin'], security: bearerAuth, params: IdParams, response: { 200: RunView, ...errors(401, 403, 404) } } },
    async (request) => {
      const run = isUuid(request.params.id) ? await findRun(pool, request.params.id) : null;
      if (!run) throw notFound('reconciliation run');
      return run;
    },
  );

  app.post(
    '/v1/reconciliation/exceptions/:id/resolve',
    {
      onRequest: admin,
      schema: {
        summary: 'Mark an exception reviewed; it no longer counts against clean',
        tags: ['admin'],
        security: bearerAuth,
        params: IdParams,
        body: Type.Object({ note: Type.String({ minLength: 1, maxLength: 2000 }) }),
        response: { 200: ReconciliationExceptionView, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const resolved = isUuid(request.params.id) ? await resolveException(pool, request.params.id, request.body.note) : null;
      if (!resolved) throw notFound('exception');
      return resolved;
    },
  );

  app.post(
    '/v1/provider-usage',
    {
      onRequest: admin,
      schema: {
        summary: 'Import the provider\'s own usage records, compared by reconciliation (idempotent per import_id)',
        tags: ['admin'],
        security: bearerAuth,
        headers: IdempotencyHeader,
        body: Type.Object({
          import_id: Type.String({ minLength: 1, maxLength: 200 }),
          records: Type.Array(Type.Object({ provider: Type.String(), provider_job_ref: Type.String(), usage: Type.Record(Type.String(), Type.Integer()) }), { maxItems: 10_000 }),
        }),
        response: { 201: Type.Object({ imported: Type.Integer(), already_imported: Type.Integer() }), ...errors(400, 401, 403, 409, 422) },
      },
    },
    async (request, reply) => {
      let records: UsageRecord[];
      try {
        records = request.body.records.map((r, i) => validateRecord(r, `records[${i}]`));
      } catch (error) {
        if (error instanceof InvalidUsageFile) throw new ApiError(400, 'invalid_request', error.message);
        throw error;
      }
      return runIdempotent(pool, request, reply, { required: false }, async (tx) => {
        try {
          return { status: 201, body: await importProviderUsage(tx, request.body.import_id, records) };
        } catch (error) {
          if (error instanceof InvalidUsageFile) throw new ApiError(400, 'invalid_request', error.message);
          if (error instanceof ImportIdReused) throw new ApiError(422, 'import_id_reused', error.message);
          throw error;
        }
      });
    },
  );
}
