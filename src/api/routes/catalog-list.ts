import { Type } from '@sinclair/typebox';
import { isUuid } from '../../ids.js';
import { listPriceVersions } from '../../catalog/price-list.js';
import { listProviders } from '../../catalog/provider-list.js';
import { findTenant, listTenants } from '../../catalog/tenant-list.js';
import { requireAccess } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { ModelFilter } from '../list-filters.js';
import { PriceVersionItem, TenantView, priceVersionItem, tenantView } from '../list-views.js';
import { ListOf, ListQueryFields, pageOf, pageRequest } from '../pagination.js';
import { Currency, IdParams, bearerAuth, errors } from '../schemas.js';
import { ProviderView, providerView } from './providers.js';

/** A provider's name, as POST /v1/providers takes it: the cursor of the providers list. */
const PROVIDER_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

const PriceListQuery = Type.Object({
  ...ListQueryFields,
  model: ModelFilter,
  currency: Type.Optional(Currency),
  current: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'true: only the current version of each model and currency' })),
});

/** What the operator registers: tenants, price versions, providers (secrets never shown). */
export function catalogListRoutes(app: ApiApp, { pool }: ApiContext): void {
  const admin = requireAccess('admin', pool);

  app.get(
    '/v1/tenants',
    {
      onRequest: admin,
      schema: {
        summary: "Tenants, newest first; the cursor is a tenant's id",
        tags: ['admin'],
        security: bearerAuth,
        querystring: Type.Object(ListQueryFields),
        response: { 200: ListOf(TenantView), ...errors(400, 401, 403) },
      },
    },
    async (request) => {
      const page = pageRequest(request.query, isUuid);
      const { data, has_more } = pageOf(await listTenants(pool, page), page);
      return { data: data.map(tenantView), has_more };
    },
  );

  app.get(
    '/v1/tenants/:id',
    { onRequest: admin, schema: { summary: 'A tenant', tags: ['admin'], security: bearerAuth, params: IdParams, response: { 200: TenantView, ...errors(401, 403, 404) } } },
    async (request) => {
      const tenant = isUuid(request.params.id) ? await findTenant(pool, request.params.id) : null;
      if (!tenant) throw notFound('tenant');
      return tenantView(tenant);
    },
  );

  app.get(
    '/v1/prices',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: "Price versions, one object per version, newest published first, each marked current or superseded; the cursor is a version's id",
        tags: ['prices'],
        security: bearerAuth,
        querystring: PriceListQuery,
        response: { 200: ListOf(PriceVersionItem), ...errors(400, 401, 403) },
      },
    },
    async (request) => {
      const query = request.query;
      const page = pageRequest(query, isUuid);
      const filter = { model: query.model ?? null, currency: query.currency ?? null, current: query.current === undefined ? null : query.current === 'true' };
      const { data, has_more } = pageOf(await listPriceVersions(pool, filter, page), page);
      return { data: data.map(priceVersionItem), has_more };
    },
  );

  app.get(
    '/v1/providers',
    {
      onRequest: admin,
      schema: {
        summary: "Providers, newest registered first, without their secrets or API keys; the cursor is a provider's name",
        tags: ['admin'],
        security: bearerAuth,
        querystring: Type.Object(ListQueryFields),
        response: { 200: ListOf(ProviderView), ...errors(400, 401, 403) },
      },
    },
    async (request) => {
      const page = pageRequest(request.query, (name) => PROVIDER_NAME.test(name));
      const rows = await listProviders(pool, page);
      if (!rows) {
        const param = page.cursor!.direction === 'after' ? 'starting_after' : 'ending_before';
        throw new ApiError(400, 'invalid_cursor', `${param} names no provider: send the name of a provider this list returned`, param);
      }
      const { data, has_more } = pageOf(rows, page);
      return { data: data.map(providerView), has_more };
    },
  );
}
