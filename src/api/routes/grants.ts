import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Queryable } from '../../db/pool.js';
import { GRANT_ROUTE, GRANT_STATUSES, createGrant, listWalletGrants, readGrant, voidGrant, type GrantRecord } from '../../funds/index.js';
import { isUuid } from '../../ids.js';
import { canonicalInstant } from '../../instant.js';
import { parseAmount } from '../../money/index.js';
import { requireAccess, tenantScope } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { GRANT_CATEGORIES, GrantView, grantView } from '../grant-views.js';
import { grantKeyOf, runIdempotent } from '../idempotency.js';
import { literals } from '../list-views.js';
import { ListOf, ListQueryFields, pageOf, pageRequest } from '../pagination.js';
import { AmountString, IdParams, IdempotencyHeader, Metadata, RequiredIdempotencyHeader, bearerAuth, errors } from '../schemas.js';
import { visibleWallet } from './wallets.js';

/** The default priority of a grant, a credit's (CONTRACT.md "Credit grants"). */
const DEFAULT_PRIORITY = 50;
const VOID_NOTE_MAX_LENGTH = 2000;

const instantField = (description: string) => Type.Optional(Type.String({ maxLength: 100, description }));

const CreateGrant = Type.Object({
  amount: AmountString,
  category: literals(GRANT_CATEGORIES),
  priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: `lowest drawn first (default ${DEFAULT_PRIORITY})` })),
  effective_at: instantField('RFC 3339: when its money enters the wallet (default: now; a past instant is now)'),
  expires_at: instantField('RFC 3339, after effective_at and in the future: when its unheld remaining lapses (default: never)'),
  reference: Type.Optional(Type.String({ maxLength: 500, description: 'e.g. the campaign or the order' })),
  metadata: Type.Optional(Metadata),
});

const GrantsQuery = Type.Object({
  ...ListQueryFields,
  status: Type.Optional(literals(GRANT_STATUSES)),
  category: Type.Optional(literals(GRANT_CATEGORIES)),
});

const VoidGrant = Type.Object({
  note: Type.String({
    minLength: 1,
    maxLength: VOID_NOTE_MAX_LENGTH,
    pattern: '\\S',
    description: 'why: kept with the grant and on its grant_void entry',
  }),
});

/** An RFC 3339 instant of the body in its canonical text, or a 400 naming the field. */
function bodyInstant(value: string | undefined, param: string): string | null {
  if (value === undefined) return null;
  const instant = canonicalInstant(value);
  if (instant === null)
    throw new ApiError(400, 'invalid_request', `${param} must be an RFC 3339 instant, e.g. 2026-12-01T00:00:00Z`, param);
  return instant;
}

/** A grant the caller may see: its own (tenant), any (admin). Anything else is 404 alike. */
async function visibleGrant(db: Queryable, request: FastifyRequest, id: string): Promise<GrantRecord> {
  const grant = isUuid(id) ? await readGrant(db, id, tenantScope(request)) : null;
  if (!grant) throw notFound('grant');
  return grant;
}

export function grantRoutes(app: ApiApp, { pool }: ApiContext): void {
  app.post(
    GRANT_ROUTE,
    {
      onRequest: requireAccess('admin', pool),
      schema: {
        summary:
          'Give a wallet a grant of credit (operator only): paid or promotional, with a priority, a start and an expiry. Idempotency-Key required: a grant is created once, whenever retried',
        tags: ['admin'],
        security: bearerAuth,
        params: IdParams,
        headers: RequiredIdempotencyHeader,
        body: CreateGrant,
        response: { 201: GrantView, ...errors(400, 401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(pool, request, reply, { required: true }, async (tx) => {
        const body = request.body;
        const amount = parseAmount(body.amount);
        const effectiveAt = bodyInstant(body.effective_at, 'effective_at');
        const expiresAt = bodyInstant(body.expires_at, 'expires_at');
        const wallet = await visibleWallet(tx, request, request.params.id);
        const { grant } = await createGrant(tx, {
          wallet,
          amount,
          category: body.category,
          priority: body.priority ?? DEFAULT_PRIORITY,
          effectiveAt,
          expiresAt,
          reference: body.reference ?? null,
          metadata: body.metadata ?? {},
          grantKey: grantKeyOf(request, wallet),
        });
        return { status: 201, body: grantView((await readGrant(tx, grant.id))!) };
      }),
  );

  app.get(
    '/v1/wallets/:id/grants',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: "A wallet's grants, newest first, with their status now; filters status and category; the cursor is a grant's id",
        tags: ['wallets'],
        security: bearerAuth,
        params: IdParams,
        querystring: GrantsQuery,
        response: { 200: ListOf(GrantView), ...errors(400, 401, 404) },
      },
    },
    async (request) => {
      const query = request.query;
      const page = pageRequest(query, isUuid);
      const wallet = await visibleWallet(pool, request, request.params.id);
      const rows = await listWalletGrants(pool, wallet.id, { status: query.status ?? null, category: query.category ?? null }, page);
      if (rows === null) {
        const param = page.cursor?.direction === 'before' ? 'ending_before' : 'starting_after';
        throw new ApiError(400, 'invalid_cursor', `${param} must be the id of a grant of this wallet`, param);
      }
      const { data, has_more } = pageOf(rows, page);
      return { data: data.map(grantView), has_more };
    },
  );

  app.get(
    '/v1/grants/:id',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: 'A grant: what it brought, what remains and is held, its status now (a tenant its own; the admin any)',
        tags: ['wallets'],
        security: bearerAuth,
        params: IdParams,
        response: { 200: GrantView, ...errors(401, 404) },
      },
    },
    async (request) => grantView(await visibleGrant(pool, request, request.params.id)),
  );

  app.post(
    '/v1/grants/:id/void',
    {
      onRequest: requireAccess('admin', pool),
      schema: {
        summary:
          'Void a grant (operator only): its unheld remaining leaves the wallet at once (grant_void); shares held for jobs stay with them and leave when they return. A second void is 409 grant_voided',
        tags: ['admin'],
        security: bearerAuth,
        params: IdParams,
        headers: IdempotencyHeader,
        body: VoidGrant,
        response: { 200: GrantView, ...errors(400, 401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(pool, request, reply, { required: false }, async (tx) => {
        const grant = await visibleGrant(tx, request, request.params.id);
        await voidGrant(tx, grant.id, request.body.note);
        return { status: 200, body: grantView((await readGrant(tx, grant.id))!) };
      }),
  );
}
