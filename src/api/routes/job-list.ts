import { Type } from '@sinclair/typebox';
import { isUuid } from '../../ids.js';
import { JOB_STATES } from '../../lifecycle/index.js';
import { listJobs } from '../../jobs/list.js';
import { requireAccess } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { CreatedRangeFields, ModelFilter, ProviderFilter, TenantIdFilter, createdRange, listTenantOf } from '../list-filters.js';
import { JobListItem, jobListItem, literals } from '../list-views.js';
import { ListOf, ListQueryFields, pageOf, pageRequest } from '../pagination.js';
import { bearerAuth, errors } from '../schemas.js';

const JobListQuery = Type.Object({
  ...ListQueryFields,
  state: Type.Optional(literals(JOB_STATES)),
  model: ModelFilter,
  provider: ProviderFilter,
  wallet_id: Type.Optional(Type.String({ format: 'uuid', description: "only this wallet's jobs" })),
  ...CreatedRangeFields,
  ...TenantIdFilter,
});

export function jobListRoutes(app: ApiApp, { pool }: ApiContext): void {
  app.get(
    '/v1/jobs',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: "Jobs, newest first (a tenant its own; the admin all, or one tenant's with tenant_id); the cursor is a job id",
        tags: ['jobs'],
        security: bearerAuth,
        querystring: JobListQuery,
        response: { 200: ListOf(JobListItem), ...errors(400, 401, 403) },
      },
    },
    async (request) => {
      const query = request.query;
      const page = pageRequest(query, isUuid);
      const filter = {
        tenantId: listTenantOf(request, query.tenant_id),
        state: query.state ?? null,
        model: query.model ?? null,
        provider: query.provider ?? null,
        walletId: query.wallet_id ?? null,
        ...createdRange(query),
      };
      const { data, has_more } = pageOf(await listJobs(pool, filter, page), page);
      return { data: data.map(jobListItem), has_more };
    },
  );
}
