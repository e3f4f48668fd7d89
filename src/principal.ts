import { randomBytes } from 'node:crypto';
import { Socket } from 'node:net';
import type { FastifyRequest } from 'fastify';

/** Who made a request. Idempotency keys and every tenant query are scoped by it. */
export type Principal = { kind: 'admin' } | { kind: 'tenant'; tenantId: string };

/**
 * How the console calls the JSON API (app.inject) as its signed-in principal without
 * holding that principal's credential: the session resolves who it is, and the call
 * carries a ticket naming that principal.
 *
 * A ticket is 32 random bytes, made for one in-process call and forgotten when it
 * returns; it maps to the principal here, in this process's memory, so the header
 * carries no claim of its own — not "admin", not a tenant id — and a ticket seen once is
 * worth nothing afterwards. It never leaves the process: no answer carries it and the
 * request log does not write headers. And a request that came over a socket (any real
 * HTTP request, TLS or not) with the header is refused outright, whatever its value:
 * only app.inject, whose requests have no socket, can present one. (It lives here, below
 * both api/, which checks tickets in auth.ts, and console/, which makes them.)
 *
 * Why not a per-process secret header with the principal beside it: that secret would be
 * a standing credential for any principal. Why not AsyncLocalStorage around the inject:
 * it would work, but who a request is would then depend on invisible context rather than
 * on something the request carries and auth.ts checks in one place.
 */
export const IN_PROCESS_HEADER = 'x-tally-in-process-ticket';

const tickets = new Map<string, Principal>();

/** Runs one in-process call as the principal: `call` gets the header to send. */
export async function asPrincipal<T>(principal: Principal, call: (headers: Record<string, string>) => Promise<T>): Promise<T> {
  const ticket = randomBytes(32).toString('base64url');
  tickets.set(ticket, principal);
  try {
    return await call({ [IN_PROCESS_HEADER]: ticket });
  } finally {
    tickets.delete(ticket);
  }
}

/**
 * The principal an in-process request's ticket names: undefined when the request has no
 * ticket (authenticate it as usual), null when it has one that is not honoured (a real
 * request sending the header, or a ticket no call issued): 401.
 */
export function inProcessPrincipal(request: FastifyRequest): Principal | null | undefined {
  const header = request.headers[IN_PROCESS_HEADER];
  if (header === undefined) return undefined;
  if (request.raw.socket instanceof Socket || typeof header !== 'string') return null;
  return tickets.get(header) ?? null;
}
