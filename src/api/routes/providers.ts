import { Type } from '@sinclair/typebox';
import type { FastifyBaseLogger } from 'fastify';
import { isUniqueViolationOn } from '../../db/errors.js';
import { withTransaction } from '../../db/transaction.js';
import { InvalidProviderSettings, InvalidSecret, insertProvider, missesFalUserId, updateProvider, type ProviderRow } from '../../catalog/providers.js';
import { PROVIDER_KINDS } from '../../webhooks/adapters/index.js';
import { policyToJson, parsePolicy } from '../../lifecycle/index.js';
import { requireAccess } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { runIdempotent } from '../idempotency.js';
import { IdempotencyHeader, bearerAuth, errors } from '../schemas.js';

/** A policy's duration: a whole number of seconds, up to a year. */
const PolicySeconds = Type.Integer({ minimum: 1, maximum: 365 * 24 * 60 * 60 });
/** api_key, base_url and user_id: far longer than any real one, short enough to store. */
const SETTING_MAX_LENGTH = 1000;

const Policies = Type.Object(
  {
    failed_with_usage: Type.Optional(Type.Union([Type.Literal('release'), Type.Literal('capture')])),
    cancel_grace_seconds: Type.Optional(PolicySeconds),
    hold_ttl_seconds: Type.Optional(PolicySeconds),
  },
  { additionalProperties: false },
);
const Settings = {
  secrets: Type.Optional(Type.Array(Type.String({ maxLength: 500 }), { maxItems: 10, description: 'active signing secrets ("whsec_..."); any one verifies' })),
  // A JWK Set as fal publishes it, pasted whole: members besides `keys` are allowed (RFC 7517) and ignored.
  jwks: Type.Optional(Type.Union([Type.Object({ keys: Type.Array(Type.Object({}, { additionalProperties: true })) }, { additionalProperties: true }), Type.Null()])),
  api_key: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: SETTING_MAX_LENGTH, description: 'write-only' }), Type.Null()])),
  base_url: Type.Optional(Type.Union([Type.String({ maxLength: SETTING_MAX_LENGTH }), Type.Null()])),
  user_id: Type.Optional(
    Type.Union([Type.String({ maxLength: SETTING_MAX_LENGTH, description: "fal only: your fal user id; webhooks signed for another user are refused" }), Type.Null()]),
  ),
  policies: Type.Optional(Policies),
};
const CreateProvider = Type.Object({
  name: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,62}$', description: 'one to 63 lowercase letters, digits, - and _, starting with a letter or digit' }),
  kind: Type.Union(PROVIDER_KINDS.map((k) => Type.Literal(k))),
  ...Settings,
});
const PatchProvider = Type.Object(Settings);
export const ProviderView = Type.Object({
  name: Type.String(),
  kind: Type.String(),
  webhook_path: Type.String(),
  policies: Type.Object({}, { additionalProperties: true }),
  secrets_count: Type.Integer(),
  has_api_key: Type.Boolean(),
  base_url: Type.Union([Type.String(), Type.Null()]),
  user_id: Type.Union([Type.String(), Type.Null()]),
});

/** Secrets and the API key are never returned; fal's user_id is not secret. */
export function providerView(row: ProviderRow) {
  return {
    name: row.name,
    kind: row.kind,
    webhook_path: `/v1/webhooks/${row.name}`,
    policies: policyToJson(parsePolicy(row.policies)),
    secrets_count: row.secrets.length,
    has_api_key: row.api_key !== null,
    base_url: row.base_url,
    user_id: row.user_id ?? null,
  };
}

/** Said at every create or change that leaves a fal provider open to every fal account's webhooks. */
function warnIfUnbound(log: FastifyBaseLogger, row: ProviderRow): void {
  if (missesFalUserId(row)) {
    log.warn(
      { provider: row.name },
      `fal provider ${row.name} has no user_id: fal signs every account's webhooks with the same keys, so webhooks signed for any fal user are accepted; set user_id (docs/providers/fal.md)`,
    );
  }
}

function settingsError(error: unknown): never {
  if (error instanceof InvalidSecret) throw new ApiError(400, 'invalid_secret', error.message);
  if (error instanceof InvalidProviderSettings) throw new ApiError(400, 'invalid_request', error.message);
  throw error;
}

export function providerRoutes(app: ApiApp, { pool, providers }: ApiContext): void {
  const admin = requireAccess('admin', pool);
  app.post(
    '/v1/providers',
    {
      onRequest: admin,
      schema: {
        summary: 'Register a provider that sends webhooks',
        tags: ['admin'],
        security: bearerAuth,
        headers: IdempotencyHeader,
        body: CreateProvider,
        response: { 201: ProviderView, ...errors(400, 401, 403, 409) },
      },
    },
    async (request, reply) =>
      runIdempotent(pool, request, reply, { required: false }, async (tx) => {
        const { name, kind, ...settings } = request.body;
        try {
          const row = await insertProvider(tx, name, kind, settings, request.server.serverSecret);
          warnIfUnbound(request.log, row);
          return { status: 201, body: providerView(row) };
        } catch (error) {
          if (isUniqueViolationOn(error, 'providers_pkey')) throw new ApiError(409, 'provider_exists', `a provider named ${name} exists`);
          settingsError(error);
        }
      }),
  );

  app.patch(
    '/v1/providers/:name',
    {
      onRequest: admin,
      schema: {
        summary: 'Change a provider\'s secrets, keys, base URL or policies',
        tags: ['admin'],
        security: bearerAuth,
        params: Type.Object({ name: Type.String() }),
        body: PatchProvider,
        response: { 200: ProviderView, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const row = await withTransaction(pool, (tx) =>
        updateProvider(tx, request.params.name, request.body, request.server.serverSecret).catch(settingsError),
      );
      // Committed: a secret revoked here verifies nothing from the next delivery this
      // process receives on (other processes drop theirs at the change's notification).
      providers.changed();
      if (!row) throw notFound('provider');
      warnIfUnbound(request.log, row);
      return providerView(row);
    },
  );
}
