import { Type } from '@sinclair/typebox';
import { isUuid } from '../../ids.js';
import { ALERT_CLASSES, listAlerts } from '../../alerts/index.js';
import { requireAccess } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { JobIdFilter, TenantIdFilter, listTenantOf } from '../list-filters.js';
import { AlertView, alertView, literals } from '../list-views.js';
import { ListOf, ListQueryFields, pageOf, pageRequest } from '../pagination.js';
import { bearerAuth, errors } from '../schemas.js';

const AlertListQuery = Type.Object({
  ...ListQueryFields,
  class: Type.Optional(literals(ALERT_CLASSES)),
  ...JobIdFilter,
  ...TenantIdFilter,
});

export function alertListRoutes(app: ApiApp, { pool }: ApiContext): void {
  app.get(
    '/v1/alerts',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: "Alerts settlements and duties raised (wallet_overdrawn, usage_exceeds_reservation, …), newest first; the cursor is an alert's id",
        tags: ['jobs'],
        security: bearerAuth,
        querystring: AlertListQuery,
        response: { 200: ListOf(AlertView), ...errors(400, 401, 403) },
      },
    },
    async (request) => {
      const query = request.query;
      const page = pageRequest(query, isUuid);
      const filter = { tenantId: listTenantOf(request, query.tenant_id), alertClass: query.class ?? null, jobId: query.job_id ?? null };
      const { data, has_more } = pageOf(await listAlerts(pool, filter, page), page);
      return { data: data.map(alertView), has_more };
    },
  );
}
