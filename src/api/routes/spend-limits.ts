import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { isUuid } from '../../ids.js';
import { SPEND_PERIODS, deleteSpendLimit, listSpendLimits, putSpendLimit, type SpendLimitRow } from '../../funds/index.js';
import { formatAmount, parseAmount } from '../../money/index.js';
import { requireAccess, tenantScope } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { notFound } from '../errors.js';
import { optionalBody } from '../optional-body.js';
import { runIdempotent } from '../idempotency.js';
import { literals } from '../list-views.js';
import { ListOf, ListQueryFields, pageOf, pageRequest } from '../pagination.js';
import { AmountString, Currency, IdParams, SignedAmountString, bearerAuth, errors } from '../schemas.js';

/**
 * A tenant's spend limits (docs/CONTRACT.md "Spend limits"): set and removed by the
 * admin, read by the admin and by the tenant itself. A reservation that would take the
 * period's spend above a limit is refused with 402 spend_limit_reached
 * (src/funds/spend-limits.ts says what counts and how it is kept exact).
 */

const SpendLimitView = Type.Object(
  {
    id: Type.String(),
    tenant_id: Type.String(),
    currency: Type.String(),
    period: literals(SPEND_PERIODS),
    amount: AmountString,
    period_start: Type.String({
      format: 'date-time',
      description: "the current period's start (00:00 UTC of today, or of the month's first day), by the database's clock",
    }),
    spent: SignedAmountString,
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    description:
      "a limit on the tenant's spend in a currency per UTC day or month; spent: the current period's captures and adjustments plus its open holds",
  },
);
const DeletedSpendLimitView = Type.Object(
  { ...SpendLimitView.properties, deleted: Type.Literal(true) },
  { description: 'the limit as it was; it no longer applies' },
);
const PutSpendLimitBody = Type.Object({
  currency: Currency,
  period: literals(SPEND_PERIODS),
  amount: AmountString,
});

function spendLimitView(row: SpendLimitRow) {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    currency: row.currency,
    period: row.period,
    amount: formatAmount(row.amount),
    period_start: `${row.starts_on}T00:00:00Z`,
    spent: formatAmount(row.spent),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The tenant a path names, as the caller may see it: the admin any, a tenant only itself (else 404 alike). */
function namedTenant(request: FastifyRequest, id: string): string {
  const own = tenantScope(request);
  const tenantId = id.toLowerCase();
  if (!isUuid(id) || (own !== null && own !== tenantId)) throw notFound('tenant');
  return tenantId;
}

export function spendLimitRoutes(app: ApiApp, { pool }: ApiContext): void {
  app.put(
    '/v1/tenants/:id/spend-limits',
    {
      onRequest: requireAccess('admin', pool),
      schema: {
        summary:
          "Set the tenant's spend limit for a currency and a UTC period (day or month): 201 when new, 200 when it replaces the one before",
        tags: ['admin'],
        security: bearerAuth,
        params: IdParams,
        body: PutSpendLimitBody,
        response: { 200: SpendLimitView, 201: SpendLimitView, ...errors(400, 401, 403, 404) },
      },
    },
    async (request, reply) =>
      runIdempotent(pool, request, reply, { required: false }, async (tx) => {
        const amount = parseAmount(request.body.amount, { allowZero: true });
        const tenantId = namedTenant(request, request.params.id);
        const put = await putSpendLimit(tx, { tenantId, currency: request.body.currency, period: request.body.period, amount });
        if (!put) throw notFound('tenant');
        return { status: put.created ? 201 : 200, body: spendLimitView(put.row) };
      }),
  );

  app.get(
    '/v1/tenants/:id/spend-limits',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: "The tenant's spend limits with the current period's spend, newest first (the admin any tenant's, a tenant its own)",
        tags: ['tenants'],
        security: bearerAuth,
        params: IdParams,
        querystring: Type.Object(ListQueryFields),
        response: { 200: ListOf(SpendLimitView), ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const page = pageRequest(request.query, isUuid);
      const tenantId = namedTenant(request, request.params.id);
      const { data, has_more } = pageOf(await listSpendLimits(pool, tenantId, page), page);
      return { data: data.map(spendLimitView), has_more };
    },
  );

  app.delete(
    '/v1/tenants/:id/spend-limits/:limit_id',
    {
      onRequest: requireAccess('admin', pool),
      ...optionalBody,
      schema: {
        summary: "Remove one of the tenant's spend limits (its spend goes on being counted)",
        tags: ['admin'],
        security: bearerAuth,
        params: Type.Object({ id: Type.String(), limit_id: Type.String() }),
        response: { 200: DeletedSpendLimitView, ...errors(401, 403, 404) },
      },
    },
    async (request) => {
      const tenantId = namedTenant(request, request.params.id);
      const id = request.params.limit_id;
      const row = isUuid(id) ? await deleteSpendLimit(pool, tenantId, id.toLowerCase()) : null;
      if (!row) throw notFound('spend limit');
      return { ...spendLimitView(row), deleted: true as const };
    },
  );
}
