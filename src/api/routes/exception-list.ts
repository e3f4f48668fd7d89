import { Type } from '@sinclair/typebox';
import { isUuid } from '../../ids.js';
import { EXCEPTION_CLASSES } from '../../reconcile/checks.js';
import { EXCEPTION_STATUSES, listExceptions } from '../../reconcile/exception-list.js';
import { requireAccess } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { TenantIdFilter } from '../list-filters.js';
import { ExceptionListItem, exceptionListItem, literals } from '../list-views.js';
import { ListOf, ListQueryFields, pageOf, pageRequest } from '../pagination.js';
import { bearerAuth, errors } from '../schemas.js';

const ExceptionListQuery = Type.Object({
  ...ListQueryFields,
  class: Type.Optional(literals(EXCEPTION_CLASSES)),
  status: Type.Optional(literals(EXCEPTION_STATUSES)),
  ...TenantIdFilter,
});

export function exceptionListRoutes(app: ApiApp, { pool }: ApiContext): void {
  app.get(
    '/v1/reconciliation/exceptions',
    {
      onRequest: requireAccess('admin', pool),
      schema: {
        summary: "Reconciliation exceptions, the most recently first found first: open, resolved or cleared; the cursor is an exception's id",
        tags: ['admin'],
        security: bearerAuth,
        querystring: ExceptionListQuery,
        response: { 200: ListOf(ExceptionListItem), ...errors(400, 401, 403) },
      },
    },
    async (request) => {
      const query = request.query;
      const page = pageRequest(query, isUuid);
      const filter = { exceptionClass: query.class ?? null, status: query.status ?? null, tenantId: query.tenant_id?.toLowerCase() ?? null };
      const { data, has_more } = pageOf(await listExceptions(pool, filter, page), page);
      return { data: data.map(exceptionListItem), has_more };
    },
  );
}
