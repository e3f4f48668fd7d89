import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Every request has an id, returned in this header and named in each of its log lines
 * (as REQUEST_ID_LOG_LABEL), so one answer can be found in the logs. A caller's or a
 * proxy's own id is kept when it is sane; otherwise the server makes one.
 */
export const REQUEST_ID_HEADER = 'x-request-id';
export const REQUEST_ID_LOG_LABEL = 'request_id';
/** Long enough for any tracing id (a W3C traceparent is 55 characters), short enough for a log line. */
export const REQUEST_ID_MAX_LENGTH = 200;

/** Printable ASCII without spaces: nothing a log viewer or a header could misread. */
const SANE_REQUEST_ID = new RegExp(`^[\\x21-\\x7e]{1,${REQUEST_ID_MAX_LENGTH}}$`);

/**
 * Fastify's genReqId. Fastify's own requestIdHeader would take any header value as it
 * came; this one reads the header itself and keeps it only when it is sane (a repeated
 * header arrives joined by ", " and is replaced).
 */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Every answer carries the request's id, errors and 404s included. */
export function returnRequestId(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
  });
}

/**
 * Fastify answers a path it cannot route (undecodable, too long) through frameworkErrors
 * without running the hooks: the header is set before that handler answers.
 */
export function withRequestId(
  handler: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void,
): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    handler(error, request, reply);
  };
}
