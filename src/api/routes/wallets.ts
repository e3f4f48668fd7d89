import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { isUniqueViolationOn } from '../../db/errors.js';
import { withSavepoint } from '../../db/transaction.js';
import { isUuid } from '../../ids.js';
import { findWallet, insertWallet, type AccountRow } from '../../ledger/accounts.js';
import { CREDIT_ROUTE, creditWallet } from '../../ledger/credit.js';
import { listWalletEntries } from '../../ledger/entries.js';
import { parseAmount } from '../../money/index.js';
import type { Queryable } from '../../db/pool.js';
import { requireAccess, requireTenant, tenantScope } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { creditKeyOf, runIdempotent } from '../idempotency.js';
import { AmountString, Currency, IdParams, IdempotencyHeader, Metadata, RequiredIdempotencyHeader, SignedAmountString, bearerAuth, errors } from '../schemas.js';
import { entryView, walletView } from '../views.js';

const WalletView = Type.Object({
  id: Type.String(),
  tenant_id: Type.String(),
  currency: Type.String(),
  metadata: Metadata,
  balance: SignedAmountString,
  reserved: AmountString,
  available: SignedAmountString,
  created_at: Type.String(),
});
const EntryView = Type.Object({
  id: Type.String(),
  entry_type: Type.String(),
  amount: SignedAmountString,
  settlement_key: Type.String(),
  job_id: Type.Union([Type.String(), Type.Null()]),
  reference: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
});
const Credit = Type.Object({
  amount: AmountString,
  reference: Type.Optional(Type.String({ maxLength: 500, description: 'e.g. the payment id' })),
});
/** Entries per page of GET /v1/wallets/{id}/entries: when no limit is given, and the most one may ask for. */
const ENTRIES_PAGE_DEFAULT = 50;
const ENTRIES_PAGE_MAX = 100;

const EntriesQuery = Type.Object({
  cursor: Type.Optional(Type.String({ maxLength: 100 })),
  limit: Type.Optional(
    Type.String({ pattern: `^[0-9]{1,${String(ENTRIES_PAGE_MAX).length}}$`, description: `a whole number from 1 to ${ENTRIES_PAGE_MAX} (default ${ENTRIES_PAGE_DEFAULT})` }),
  ),
});

/** A wallet the caller may see: its own (tenant), any (admin). Anything else is 404 alike. */
export async function visibleWallet(db: Queryable, request: FastifyRequest, id: string): Promise<AccountRow> {
  const wallet = isUuid(id) ? await findWallet(db, id, tenantScope(request) ?? undefined) : null;
  if (!wallet) throw notFound('wallet');
  return wallet;
}

export function walletRoutes(app: ApiApp, { pool }: ApiContext): void {
  app.post(
    '/v1/wallets',
    {
      onRequest: requireAccess('tenant', pool),
      schema: {
        summary: 'Open the tenant\'s wallet in a currency (one per currency)',
        tags: ['wallets'],
        security: bearerAuth,
        headers: IdempotencyHeader,
        body: Type.Object({ currency: Currency, metadata: Type.Optional(Metadata) }),
        response: { 201: WalletView, ...errors(400, 401, 403, 409) },
      },
    },
    async (request, reply) =>
      runIdempotent(pool, request, reply, { required: false }, async (tx) => {
        const tenantId = requireTenant(request);
        try {
          const row = await withSavepoint(tx, 'open_wallet', () => insertWallet(tx, tenantId, request.body.currency, request.body.metadata));
          return { status: 201, body: walletView(row) };
        } catch (error) {
          if (!isUniqueViolationOn(error, 'accounts_tenant_currency_kind_key')) throw error;
          const existing = await tx.query<{ id: string }>(
            `select id from accounts where tenant_id = $1 and currency = $2 and kind = 'wallet'`,
            [tenantId, request.body.currency],
          );
          throw new ApiError(409, 'wallet_exists', `this tenant already has a ${request.body.currency} wallet: ${existing.rows[0]?.id}`);
        }
      }),
  );

  app.get(
    '/v1/wallets/:id',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: { summary: 'A wallet\'s balance, reserved and available amounts', tags: ['wallets'], security: bearerAuth, params: IdParams, response: { 200: WalletView, ...errors(401, 404) } },
    },
    async (request) => walletView(await visibleWallet(pool, request, request.params.id)),
  );

  app.get(
    '/v1/wallets/:id/entries',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: 'The wallet\'s ledger entries, newest first (amount signed from the wallet\'s side)',
        tags: ['wallets'],
        security: bearerAuth,
        params: IdParams,
        querystring: EntriesQuery,
        response: { 200: Type.Object({ data: Type.Array(EntryView), next_cursor: Type.Union([Type.String(), Type.Null()]) }), ...errors(400, 401, 404) },
      },
    },
    async (request) => {
      const wallet = await visibleWallet(pool, request, request.params.id);
      const limit = request.query.limit === undefined ? ENTRIES_PAGE_DEFAULT : Number(request.query.limit);
      if (limit < 1 || limit > ENTRIES_PAGE_MAX) throw new ApiError(400, 'invalid_request', `limit must be between 1 and ${ENTRIES_PAGE_MAX}`);
      const cursor = request.query.cursor ?? null;
      if (cursor !== null && !isUuid(cursor)) throw new ApiError(400, 'invalid_cursor', 'cursor must be a next_cursor value from a previous page');
      const entries = await listWalletEntries(pool, wallet.id, limit + 1, cursor);
      const page = entries.slice(0, limit);
      return { data: page.map(entryView), next_cursor: entries.length > limit ? page.at(-1)!.id : null };
    },
  );

  app.post(
    CREDIT_ROUTE,
    {
      onRequest: requireAccess('admin', pool),
      schema: {
        summary: 'Top up a wallet after a payment (operator only). Idempotency-Key required: a credit is applied once, whenever retried',
        tags: ['admin'],
        security: bearerAuth,
        params: IdParams,
        headers: RequiredIdempotencyHeader,
        body: Credit,
        response: { 201: EntryView, ...errors(400, 401, 403, 404, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(pool, request, reply, { required: true }, async (tx) => {
        const amount = parseAmount(request.body.amount);
        const wallet = await visibleWallet(tx, request, request.params.id);
        const { entry } = await creditWallet(tx, {
          wallet,
          amount,
          creditKey: creditKeyOf(request, wallet.id),
          reference: request.body.reference ?? null,
        });
        return { status: 201, body: entryView(entry) };
      }),
  );
}
