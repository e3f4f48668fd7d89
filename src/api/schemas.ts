import { Type, type TSchema } from '@sinclair/typebox';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from './limits.js';

/**
 * Request and response schemas: Fastify validates requests with them and
 * @fastify/swagger turns the same objects into GET /openapi.json.
 */

export const AmountString = Type.String({
  pattern: '^(0|[1-9][0-9]{0,12})(\\.[0-9]{1,6})?$',
  description: 'a decimal string in major units with at most 6 decimals, e.g. "12.50"',
  examples: ['12.50'],
});
export const SignedAmountString = Type.String({ description: 'a signed decimal string in major units', examples: ['-0.000150'] });
export const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'a three-letter ISO 4217 code in capitals', examples: ['USD'] });
export const Uuid = Type.String({ format: 'uuid' });
export const Usage = Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), {
  description: 'usage per dimension: non-negative safe integers',
  examples: [{ input_tokens: 1200, output_tokens: 340 }],
});

/** Limits in the manner of Stripe's metadata: enough for labels, too small for a payload. */
export const METADATA_MAX_KEYS = 50;
export const METADATA_KEY_MAX_LENGTH = 40;
export const METADATA_VALUE_MAX_LENGTH = 500;

/** The one free-form field: the client's labels, stored and returned, never interpreted. */
export const Metadata = Type.Unsafe<Record<string, string>>({
  type: 'object',
  additionalProperties: Type.String({ maxLength: METADATA_VALUE_MAX_LENGTH }),
  propertyNames: { minLength: 1, maxLength: METADATA_KEY_MAX_LENGTH },
  maxProperties: METADATA_MAX_KEYS,
  description: `an object of your own labels: up to ${METADATA_MAX_KEYS} keys of 1 to ${METADATA_KEY_MAX_LENGTH} characters, each value a string of at most ${METADATA_VALUE_MAX_LENGTH} characters`,
  examples: [{ order_id: 'ord_1234' }],
});

export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'stable, snake_case: branch on it' }),
      message: Type.String({ description: 'for people: what is wrong and what to send instead' }),
      param: Type.Optional(Type.String({ description: 'the field, header or query parameter at fault, e.g. "amount" or "unit_prices.input_tokens"' })),
    }),
  },
  { $id: 'Error', description: 'every error: a stable snake_case code, a message, and the field at fault when there is one' },
);

/** Any string: a malformed id is looked up like any other and answers 404 (CONTRACT "HTTP API"). */
export const IdParams = Type.Object({ id: Type.String() });

export const IdempotencyHeader = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, description: 'replays the first answer for the same key and body' })),
});

/** Where the server requires the key (CONTRACT: jobs and credits): missing is 400 idempotency_key_required. */
export const RequiredIdempotencyHeader = Type.Object({
  'idempotency-key': Type.String({ maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, description: 'required: the call is applied once per key; a retry with the same key and body replays the first answer' }),
});

/** Declares the error statuses a route answers with, for the OpenAPI document. */
export function errors(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries(statuses.map((s) => [s, Type.Ref('Error')]));
}

export const bearerAuth = [{ bearerAuth: [] }];
