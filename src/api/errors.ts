import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ConnectionLost, InvalidText, NumericOutOfRange, StatementTimeout, mapDatabaseError } from '../db/errors.js';
import { AmountOutOfRange, InvalidAmountError, MAX_AMOUNT_MICROS, formatAmount } from '../money/index.js';
import { InvalidUsageError } from '../pricing/index.js';
import { InvalidPolicyError } from '../lifecycle/index.js';
import {
  CreditKeyConflict,
  GrantAlreadyVoided,
  GrantAwaitingPayment,
  GrantKeyConflict,
  GrantNotFound,
  InsufficientFunds,
  InvalidExpiry,
  SpendLimitReached,
} from '../funds/index.js';
import { InvalidLimits, NoPrice } from '../jobs/submit.js';
import { JobTerminal } from '../ledger/index.js';
import { validationFailure } from './validation-errors.js';
import { BODY_LIMIT_BYTES } from './limits.js';

/**
 * Every HTTP error is {"error": {"code", "message", "param"?}} with a stable snake_case
 * code; `param` names the field (or header, or query parameter) at fault, when one is.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const notFound = (what = 'resource') => new ApiError(404, 'not_found', `${what} not found`);

export interface ErrorBody {
  error: { code: string; message: string; param?: string };
}

export function errorBody(code: string, message: string, param?: string): ErrorBody {
  return { error: { code, message, ...(param ? { param } : {}) } };
}

/** Domain errors that carry their own answer. */
function domainError(raw: unknown): ApiError | null {
  if (raw instanceof ApiError) return raw;
  const error = mapDatabaseError(raw);
  if (error instanceof InvalidAmountError) return new ApiError(400, 'invalid_amount', error.message);
  if (error instanceof AmountOutOfRange) return new ApiError(422, 'amount_out_of_range', error.message);
  if (error instanceof NumericOutOfRange) {
    return new ApiError(
      422,
      'amount_out_of_range',
      `a value is beyond what Tally stores (amounts and balances up to ${formatAmount(MAX_AMOUNT_MICROS)}); nothing was written`,
    );
  }
  if (error instanceof InvalidUsageError) return new ApiError(400, 'invalid_usage', error.message);
  if (error instanceof InvalidPolicyError) return new ApiError(400, 'invalid_policy', error.message);
  if (error instanceof InsufficientFunds)
    return new ApiError(
      402,
      'insufficient_funds',
      "the wallet's available balance does not cover this job's reservation; nothing was reserved",
    );
  if (error instanceof SpendLimitReached) return new ApiError(402, 'spend_limit_reached', error.message);
  if (error instanceof InvalidLimits) return new ApiError(422, 'invalid_limits', error.message);
  if (error instanceof JobTerminal) return new ApiError(409, 'job_terminal', error.message);
  if (error instanceof NoPrice) return new ApiError(422, 'no_price', error.message);
  if (error instanceof CreditKeyConflict) return new ApiError(409, 'credit_key_conflict', error.message);
  if (error instanceof InvalidExpiry) return new ApiError(400, 'invalid_expiry', error.message, 'expires_at');
  if (error instanceof GrantKeyConflict) return new ApiError(409, 'grant_key_conflict', error.message);
  if (error instanceof GrantAlreadyVoided) return new ApiError(409, 'grant_voided', `this grant is voided already; nothing was changed`);
  if (error instanceof GrantAwaitingPayment)
    return new ApiError(
      409,
      'grant_awaiting_payment',
      'this grant is awaiting its payment: money the customer may still pay must have a grant to land in; it can be voided once paid (or once its payment ends)',
    );
  if (error instanceof GrantNotFound) return new ApiError(404, 'not_found', 'grant not found');
  if (error instanceof InvalidText) return new ApiError(400, 'invalid_request', 'text fields must not contain NUL characters');
  if (error instanceof ConnectionLost || error instanceof StatementTimeout) {
    return new ApiError(503, 'database_unavailable', 'the database is unavailable; retry later');
  }
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'ECONNREFUSED' || (error instanceof Error && /timeout exceeded when trying to connect/i.test(error.message))) {
    return new ApiError(503, 'database_unavailable', 'the database is unavailable; retry later');
  }
  return null;
}

export function toApiError(error: unknown): ApiError | null {
  const fastify = error as FastifyError;
  if (fastify?.validation && fastify.validation.length > 0) {
    const failure = validationFailure(fastify.validation, fastify.validationContext ?? 'body');
    return new ApiError(400, failure.code, failure.message, failure.param || undefined);
  }
  switch (fastify?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'payload_too_large', 'the body is larger than 1 MiB');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError(400, 'invalid_json', 'the body is not valid JSON');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(415, 'unsupported_media_type', 'send application/json');
  }
  if (fastify instanceof SyntaxError) return new ApiError(400, 'invalid_json', 'the body is not valid JSON');
  return domainError(error);
}

/**
 * Errors the router raises before any route or hook runs: a path parameter that is not
 * valid percent-encoding, or longer than the router accepts. Such a path names nothing,
 * so it is answered like any malformed id (CONTRACT: 404 not_found alike).
 */
export function frameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    afterBody(request, () => void reply.code(404).send(errorBody('not_found', 'nothing exists at this path')));
    return;
  }
  reply.log.error({ err: error }, 'router error');
  afterBody(request, () => void reply.code(500).send(errorBody('internal_error', 'an internal error occurred; it has been logged')));
}

/** How much of a refused request's body is read and dropped before answering it. */
const DRAIN_LIMIT_BYTES = 4 * BODY_LIMIT_BYTES;

/**
 * The router, and Fastify's body limit (413), refuse before the body is read. Answered at once, the socket would
 * close with the client's body still unread, and the kernel resets such a connection: a
 * client still sending sees ECONNRESET instead of the answer (seen under load in the HTTP
 * fuzz test). So the body is read and dropped first, up to a bound; beyond it the
 * connection is cut.
 */
function afterBody(request: FastifyRequest, answer: () => void): void {
  const raw = request.raw;
  if (raw.complete || raw.destroyed || raw.readableEnded) {
    answer();
    return;
  }
  let answered = false;
  const answerOnce = () => {
    if (answered) return;
    answered = true;
    answer();
  };
  let seen = 0;
  raw.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > DRAIN_LIMIT_BYTES) raw.destroy();
  });
  raw.once('end', answerOnce);
  // Cut, or gone: the reply is still settled, so nothing waits on it.
  raw.once('close', answerOnce);
  raw.once('error', () => {});
  raw.resume();
}

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const known = toApiError(error);
    if (known) {
      if (known.status >= 500) request.log.warn({ err: error }, known.message);
      // A body refused before it was read (413) is drained first, as the router's refusals are.
      afterBody(request, () => void reply.code(known.status).send(errorBody(known.code, known.message, known.param)));
      return reply;
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send(errorBody('internal_error', 'an internal error occurred; it has been logged'));
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(errorBody('not_found', `no route for ${request.method} ${request.url.split('?')[0]}`)),
  );
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (a malformed header, two
 * Content-Lengths, headers over the size limit): answered in the usual error shape, and
 * the connection closed, since what follows on it cannot be trusted.
 *
 * Closed by a lingering close (RFC 9112 §9.6): our side is half-closed after the answer
 * and what the client still sends is read and dropped until it closes its side, up to
 * DRAIN_LIMIT_BYTES. Destroyed at the next chunk instead (as before), the socket closed
 * with unread data and the kernel answered it with a reset; a client still sending its
 * body (in CLOSE_WAIT after our FIN) then had its write fail with EPIPE, and Node's
 * client sockets discard what they had not yet read on a write error — the answer.
 */
export function clientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) {
    socket.destroy();
    return;
  }
  // Node's parser reports its error again for every chunk that follows: answered already,
  // those chunks are what the lingering close drains.
  if (socket.writableEnded) return;
  if (!socket.writable) {
    socket.destroy(error);
    return;
  }
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const [status, reason, body] = tooLarge
    ? [
        431,
        'Request Header Fields Too Large',
        errorBody('headers_too_large', 'the request headers are larger than the server accepts (16 KiB)'),
      ]
    : [
        400,
        'Bad Request',
        errorBody('malformed_request', 'the request is not well-formed HTTP/1.1 (a header, its line or Content-Length is malformed)'),
      ];
  const json = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(json)}\r\nconnection: close\r\n\r\n${json}`,
  );
  lingeringClose(socket);
}

/** Reads and drops what the client still sends until it closes, within a bound of bytes and of idle time. */
function lingeringClose(socket: Socket): void {
  let seen = 0;
  socket.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > DRAIN_LIMIT_BYTES) socket.destroy();
  });
  socket.once('end', () => socket.destroy());
  // A client that neither sends nor closes does not hold the socket.
  socket.setTimeout(LINGER_IDLE_MS, () => socket.destroy());
  socket.resume();
}

const LINGER_IDLE_MS = 5_000;
