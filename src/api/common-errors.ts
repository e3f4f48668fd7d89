import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The error answers a route can give whatever it does, declared on every route at
 * registration so the OpenAPI document lists them and the response check
 * (response-check.ts) accepts them. A route declares its own (401, 404, …) itself.
 * - 500, and 503 when the database is unavailable: everywhere;
 * - 400 wherever there is input to refuse (a body, a query, a header, a path parameter);
 * - 413 and 415 wherever a body may be sent: Fastify reads one on any POST, PUT or PATCH;
 * - 409 and 422 wherever an Idempotency-Key is taken (in use; reused with another body).
 */
export function declareCommonErrors(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema as
      | { response?: Record<string, unknown>; body?: unknown; querystring?: unknown; params?: unknown; headers?: { properties?: Record<string, unknown> } }
      | undefined;
    if (!schema?.response) return;
    const methods = [route.method].flat();
    const takesBody = methods.some((method) => WITH_BODY.has(method));
    const statuses = [500, 503];
    if (takesBody || schema.body || schema.querystring || schema.params || schema.headers) statuses.push(400);
    if (takesBody) statuses.push(413, 415);
    if (schema.headers?.properties?.['idempotency-key']) statuses.push(409, 422);
    for (const status of statuses) schema.response[status] ??= Type.Ref('Error');
  });
}
