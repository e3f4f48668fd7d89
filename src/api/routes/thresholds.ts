import { Type } from '@sinclair/typebox';
import { withTransaction } from '../../db/transaction.js';
import { isUuid } from '../../ids.js';
import { MAX_THRESHOLDS_PER_WALLET, deleteThreshold, insertThreshold, listThresholds, type ThresholdRow } from '../../funds/index.js';
import { formatAmount, parseAmount } from '../../money/index.js';
import { requireAccess, tenantScope } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { optionalBody } from '../optional-body.js';
import { runIdempotent } from '../idempotency.js';
import { ListOf, ListQueryFields, pageOf, pageRequest } from '../pagination.js';
import { AmountString, IdParams, IdempotencyHeader, bearerAuth, errors } from '../schemas.js';
import { visibleWallet } from './wallets.js';

/**
 * A wallet's balance thresholds (docs/CONTRACT.md "Balance thresholds"): the tenant's
 * own wallets, or any for the admin. Crossings are announced as wallet.balance_low
 * webhooks (docs/outbound-webhooks.md); src/funds/thresholds.ts says how they are found.
 */

const ThresholdView = Type.Object(
  {
    id: Type.String(),
    wallet_id: Type.String(),
    amount: AmountString,
    armed: Type.Boolean({
      description: 'true while available is at or above amount: the next fall below it is announced (wallet.balance_low)',
    }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { description: "a threshold on the wallet's available amount (balance − reserved)" },
);
const DeletedThresholdView = Type.Object(
  { ...ThresholdView.properties, deleted: Type.Literal(true) },
  { description: 'the threshold as it was; it no longer exists' },
);
const ThresholdParams = Type.Object({ id: Type.String(), threshold_id: Type.String() });

function thresholdView(row: ThresholdRow) {
  return {
    id: row.id,
    wallet_id: row.wallet_id,
    amount: formatAmount(row.amount),
    armed: row.armed,
    created_at: row.created_at.toISOString(),
  };
}

export function thresholdRoutes(app: ApiApp, { pool }: ApiContext): void {
  const access = requireAccess('tenant_or_admin', pool);

  app.post(
    '/v1/wallets/:id/thresholds',
    {
      onRequest: access,
      schema: {
        summary: `Add a threshold on the wallet's available amount: each fall below it sends one wallet.balance_low webhook (at most ${MAX_THRESHOLDS_PER_WALLET} per wallet)`,
        tags: ['wallets'],
        security: bearerAuth,
        params: IdParams,
        headers: IdempotencyHeader,
        body: Type.Object({ amount: AmountString }),
        response: { 201: ThresholdView, ...errors(400, 401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(pool, request, reply, { required: false }, async (tx) => {
        const amount = parseAmount(request.body.amount, { allowZero: true });
        const wallet = await visibleWallet(tx, request, request.params.id);
        const outcome = await insertThreshold(tx, wallet.id, tenantScope(request), amount);
        if ('created' in outcome) return { status: 201, body: thresholdView(outcome.created) };
        switch (outcome.refused) {
          case 'not_found':
            throw notFound('wallet');
          case 'exists':
            throw new ApiError(409, 'threshold_exists', `the wallet already has a threshold at ${formatAmount(amount)}`, 'amount');
          case 'full':
            throw new ApiError(
              422,
              'too_many_thresholds',
              `a wallet has at most ${MAX_THRESHOLDS_PER_WALLET} thresholds: delete one first`,
            );
        }
      }),
  );

  app.get(
    '/v1/wallets/:id/thresholds',
    {
      onRequest: access,
      schema: {
        summary: "The wallet's thresholds, newest first",
        tags: ['wallets'],
        security: bearerAuth,
        params: IdParams,
        querystring: Type.Object(ListQueryFields),
        response: { 200: ListOf(ThresholdView), ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const page = pageRequest(request.query, isUuid);
      const wallet = await visibleWallet(pool, request, request.params.id);
      const { data, has_more } = pageOf(await listThresholds(pool, wallet.id, page), page);
      return { data: data.map(thresholdView), has_more };
    },
  );

  app.delete(
    '/v1/wallets/:id/thresholds/:threshold_id',
    {
      onRequest: access,
      ...optionalBody,
      schema: {
        summary: 'Delete a threshold of the wallet',
        tags: ['wallets'],
        security: bearerAuth,
        params: ThresholdParams,
        response: { 200: DeletedThresholdView, ...errors(401, 403, 404) },
      },
    },
    async (request) => {
      const wallet = await visibleWallet(pool, request, request.params.id);
      const id = request.params.threshold_id;
      const row = isUuid(id) ? await withTransaction(pool, (tx) => deleteThreshold(tx, wallet.id, id.toLowerCase())) : null;
      if (!row) throw notFound('threshold');
      return { ...thresholdView(row), deleted: true as const };
    },
  );
}
