import { Type } from '@sinclair/typebox';
import { insertTenant } from '../../catalog/tenants.js';
import { newId } from '../../ids.js';
import { hashApiKey, newApiKey, requireAccess } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { runIdempotent } from '../idempotency.js';
import { IdempotencyHeader, Metadata, bearerAuth, errors } from '../schemas.js';

const CreateTenant = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), metadata: Type.Optional(Metadata) });

export function tenantRoutes(app: ApiApp, { pool }: ApiContext): void {
  app.post(
    '/v1/tenants',
    {
      onRequest: requireAccess('admin', pool),
      schema: {
        summary: 'Create a tenant and its API key (shown only in this answer and its idempotent replay)',
        tags: ['admin'],
        security: bearerAuth,
        headers: IdempotencyHeader,
        body: CreateTenant,
        response: {
          201: Type.Object({ id: Type.String(), name: Type.String(), metadata: Metadata, api_key: Type.String() }),
          ...errors(400, 401, 403, 409, 422),
        },
      },
    },
    async (request, reply) =>
      runIdempotent(pool, request, reply, { required: false }, async (tx) => {
        const id = newId();
        const apiKey = newApiKey();
        const metadata = request.body.metadata ?? {};
        await insertTenant(tx, { id, name: request.body.name, metadata, apiKeyId: newId(), apiKeyHash: hashApiKey(apiKey) });
        return { status: 201, body: { id, name: request.body.name, metadata, api_key: apiKey } };
      }),
  );
}
