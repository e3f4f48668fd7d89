import { Type } from '@sinclair/typebox';
import { isUuid } from '../../ids.js';
import { CHARGE_TYPES } from '../../lifecycle/index.js';
import { listSettlementPage } from '../../ledger/index.js';
import { requireAccess } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { CreatedRangeFields, JobIdFilter, TenantIdFilter, createdRange, listTenantOf } from '../list-filters.js';
import { SettlementListItem, literals, settlementListItem } from '../list-views.js';
import { ListOf, ListQueryFields, pageOf, pageRequest } from '../pagination.js';
import { bearerAuth, errors } from '../schemas.js';

const SettlementListQuery = Type.Object({
  ...ListQueryFields,
  charge_type: Type.Optional(literals(CHARGE_TYPES)),
  ...JobIdFilter,
  ...CreatedRangeFields,
  ...TenantIdFilter,
});

export function settlementListRoutes(app: ApiApp, { pool }: ApiContext): void {
  app.get(
    '/v1/settlements',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: "Settlements (captures, releases, adjustments) with their pricing snapshots, newest first; the cursor is a settlement's id",
        tags: ['jobs'],
        security: bearerAuth,
        querystring: SettlementListQuery,
        response: { 200: ListOf(SettlementListItem), ...errors(400, 401, 403) },
      },
    },
    async (request) => {
      const query = request.query;
      const page = pageRequest(query, isUuid);
      const filter = {
        tenantId: listTenantOf(request, query.tenant_id),
        chargeType: query.charge_type ?? null,
        jobId: query.job_id ?? null,
        ...createdRange(query),
      };
      const { data, has_more } = pageOf(await listSettlementPage(pool, filter, page), page);
      return { data: data.map(settlementListItem), has_more };
    },
  );
}
