import { Type } from '@sinclair/typebox';
import { isUniqueViolationOn } from '../../db/errors.js';
import type { Queryable } from '../../db/pool.js';
import { withSavepoint, withTransaction } from '../../db/transaction.js';
import { isUuid } from '../../ids.js';
import { CREDIT_ROUTE, balancesAt, creditWallet, insertWallet, listWalletPage } from '../../funds/index.js';
import { formatAmount, parseAmount } from '../../money/index.js';
import { requireAccess, requireTenant } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { ApiError } from '../errors.js';
import { creditKeyOf, runIdempotent } from '../idempotency.js';
import { TenantIdFilter, instantQuery, listTenantOf } from '../list-filters.js';
import { ListOf, ListQueryFields, pageOf, pageRequest } from '../pagination.js';
import {
  AmountString,
  Currency,
  IdParams,
  IdempotencyHeader,
  Metadata,
  RequiredIdempotencyHeader,
  bearerAuth,
  errors,
} from '../schemas.js';
import { entryView, walletView } from '../views.js';
import { walletViewsWithFunds } from '../wallet-funds-view.js';
import { walletHistoryRoutes } from './wallet-history.js';
import { EntryView, InstantText, WalletBalancesView, WalletView } from './wallet-schemas.js';
import { refuseFuture, visibleWallet } from './wallet-guards.js';

export { visibleWallet } from './wallet-guards.js';

const WalletAtView = Type.Object(
  {
    ...WalletBalancesView.properties,
    at: InstantText,
    sequence: Type.Integer({ minimum: 0, description: "how many of the wallet's entries had been posted at that instant (0: none)" }),
  },
  { description: 'the wallet as of `at`: balance, reserved and available from its newest entry at or before that instant' },
);
const Credit = Type.Object({
  amount: AmountString,
  reference: Type.Optional(Type.String({ maxLength: 500, description: 'e.g. the payment id' })),
});

const instantField = (description: string) => Type.Optional(Type.String({ maxLength: 100, description }));

const WalletQuery = Type.Object({
  at: instantField(
    "an RFC 3339 instant, not in the future: the wallet's balance, reserved and available as of then (entries posted at or before it)",
  ),
});
const WalletsQuery = Type.Object({
  ...ListQueryFields,
  currency: Type.Optional(Currency),
  ...TenantIdFilter,
});

export function walletRoutes(app: ApiApp, context: ApiContext): void {
  const { pool } = context;
  app.post(
    '/v1/wallets',
    {
      onRequest: requireAccess('tenant', pool),
      schema: {
        summary: "Open the tenant's wallet in a currency (one per currency)",
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
          const row = await withSavepoint(tx, 'open_wallet', () =>
            insertWallet(tx, tenantId, request.body.currency, request.body.metadata),
          );
          return { status: 201, body: (await walletViewsWithFunds(tx, [row]))[0] };
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
    '/v1/wallets',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: "Wallets, newest first (a tenant's own; the admin's all, or one tenant's); the cursor is a wallet's id",
        tags: ['wallets'],
        security: bearerAuth,
        querystring: WalletsQuery,
        response: { 200: ListOf(WalletView), ...errors(400, 401, 403) },
      },
    },
    async (request) => {
      const page = pageRequest(request.query, isUuid);
      const filter = { tenantId: listTenantOf(request, request.query.tenant_id), currency: request.query.currency ?? null };
      // One snapshot: each wallet's running values and its grants agree.
      const list = async (tx: Queryable) => {
        const { data, has_more } = pageOf(await listWalletPage(tx, filter, page), page);
        return { data: await walletViewsWithFunds(tx, data), has_more };
      };
      return withTransaction(pool, list, { isolation: 'repeatable read' });
    },
  );

  app.get(
    '/v1/wallets/:id',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: "A wallet's balance, reserved and available amounts, now or (with ?at=) as of an instant",
        tags: ['wallets'],
        security: bearerAuth,
        params: IdParams,
        querystring: WalletQuery,
        response: { 200: Type.Union([WalletAtView, WalletView]), ...errors(400, 401, 404) },
      },
    },
    async (request) => {
      const at = request.query.at === undefined ? null : instantQuery(request.query.at, 'at');
      if (at === null) {
        const now = async (tx: Queryable) => (await walletViewsWithFunds(tx, [await visibleWallet(tx, request, request.params.id)]))[0]!;
        return withTransaction(pool, now, { isolation: 'repeatable read' });
      }
      const wallet = await visibleWallet(pool, request, request.params.id);
      await refuseFuture(pool, at, 'at');
      const then = await balancesAt(pool, wallet.id, at);
      return {
        ...walletView(wallet),
        balance: formatAmount(then.balance),
        reserved: formatAmount(then.reserved),
        available: formatAmount(then.available),
        at,
        sequence: Number(then.sequence),
      };
    },
  );

  // Entries and the statement (wallet-history.ts), registered here to keep the routes' order.
  walletHistoryRoutes(app, context);

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
