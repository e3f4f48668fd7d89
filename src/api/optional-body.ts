import type { FastifyReply, FastifyRequest, RequestPayload } from 'fastify';

/**
 * The route hooks of a call that takes no input (cancel, retry, ping, a DELETE) or only
 * optional fields (a reconciliation run's `repair`, a rotation's `grace_seconds`).
 * Clients send "nothing" in several ways, and each is the same request here: no body at
 * all (`curl -X POST`), an empty body with `content-type: application/json` (what many
 * HTTP libraries send), and `{}` with or without a content type. Left to Fastify, the
 * second is 400 invalid_json (its JSON parser refuses zero bytes), `{}` without a content
 * type 415, and no body at all fails a route whose optional body is an object ("must be
 * an object") — while the same request to a route without a body schema passed. A body
 * that says something is still validated by the route's schema, closed as every other.
 *
 * Not for routes whose body is required: there, an empty body is a mistake worth its 400.
 */
export const optionalBody = {
  async preParsing(request: FastifyRequest, _reply: FastifyReply, payload: RequestPayload): Promise<RequestPayload> {
    // The raw headers: Fastify reads the content type from them after this hook.
    const headers = request.raw.headers;
    const length = headers['content-length'];
    const empty = headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
    // Fastify parses only when a content type is given: without one, an empty body is no body,
    if (empty) delete headers['content-type'];
    // and a body sent without one is read as JSON, the only type the API speaks.
    else headers['content-type'] ??= 'application/json';
    return payload;
  },
  async preValidation(request: FastifyRequest): Promise<void> {
    // No body is the empty object: the schema validates it, and an Idempotency-Key's
    // request hash is the same for every way of sending nothing.
    if (request.body === undefined) request.body = {};
  },
};
