import { Type } from '@sinclair/typebox';
import { MODEL_NAME_MAX_LENGTH, publishPriceVersion, type PriceVersionRow } from '../../catalog/prices.js';
import { parseUnitPrice } from '../../money/index.js';
import { requireAccess } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { ApiError } from '../errors.js';
import { runIdempotent } from '../idempotency.js';
import { AmountString, Currency, bearerAuth, errors } from '../schemas.js';

const PutPrice = Type.Object({
  currency: Currency,
  unit_prices: Type.Record(Type.String({ minLength: 1, maxLength: 100 }), AmountString, {
    description: 'price per 1,000,000 units of each usage dimension',
    examples: [{ input_tokens: '1.00', output_tokens: '2.00' }],
  }),
});
const PriceView = Type.Object({
  id: Type.String(),
  model: Type.String(),
  currency: Type.String(),
  version: Type.Integer(),
  unit_prices: Type.Record(Type.String(), Type.String()),
  created_at: Type.String(),
});

export function priceView(row: PriceVersionRow) {
  return { id: row.id, model: row.model, currency: row.currency, version: row.version, unit_prices: row.unit_prices, created_at: row.created_at.toISOString() };
}

export function priceRoutes(app: ApiApp, { pool }: ApiContext): void {
  app.put(
    '/v1/prices/:model',
    {
      onRequest: requireAccess('admin', pool),
      schema: {
        summary: 'Publish a new immutable price version of a model (URL-encode "/" in model names as %2F); the current prices again answer 200 with the current version',
        tags: ['admin'],
        security: bearerAuth,
        params: Type.Object({ model: Type.String({ minLength: 1, maxLength: MODEL_NAME_MAX_LENGTH }) }),
        body: PutPrice,
        response: { 200: PriceView, 201: PriceView, ...errors(400, 401, 403) },
      },
    },
    async (request, reply) =>
      runIdempotent(pool, request, reply, { required: false }, async (tx) => {
        const entries = Object.entries(request.body.unit_prices);
        if (entries.length === 0) throw new ApiError(400, 'invalid_request', 'unit_prices needs at least one dimension');
        const prices = Object.fromEntries(entries.map(([dimension, price]) => [dimension, parseUnitPrice(price)]));
        const { row, created } = await publishPriceVersion(tx, request.params.model, request.body.currency, prices);
        return { status: created ? 201 : 200, body: priceView(row) };
      }),
  );
}
