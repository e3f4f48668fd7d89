import { Type, type TSchema } from '@sinclair/typebox';

/**
 * Request and response schemas: Fastify validates requests with them and
 * @fastify/swagger turns the same objects into GET /openapi.json.
 */

export const AmountString = Type.String({
  pattern: '^(0|[1-9][0-9]{0,12})(\\.[0-9]{1,6})?$',
  description: 'decimal string in major units, at most 6 decimals, e.g. "12.50"',
  examples: ['12.50'],
});
export const SignedAmountString = Type.String({ description: 'signed decimal string in major units', examples: ['-0.000150'] });
export const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code', examples: ['USD'] });
export const Uuid = Type.String({ format: 'uuid' });
export const Usage = Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), {
  description: 'usage per dimension: non-negative safe integers',
  examples: [{ input_tokens: 1200, output_tokens: 340 }],
});

export const ErrorResponse = Type.Object(
  { error: Type.Object({ code: Type.String(), message: Type.String() }) },
  { $id: 'Error', description: 'every error: a stable snake_case code and a message' },
);

/** Any string: a malformed id is looked up like any other and answers 404 (CONTRACT "HTTP API"). */
export const IdParams = Type.Object({ id: Type.String() });

export const IdempotencyHeader = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ maxLength: 255, description: 'replays the first answer for the same key and body' })),
});

/** Declares the error statuses a route answers with, for the OpenAPI document. */
export function errors(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries(statuses.map((s) => [s, Type.Ref('Error')]));
}

export const bearerAuth = [{ bearerAuth: [] }];
