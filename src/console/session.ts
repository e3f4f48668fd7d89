import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SessionLifetime } from './session-store.js';

/**
 * A console session is a random id in a cookie; the database keeps only its SHA-256,
 * with who signed in (session-store.ts). The cookie holds no credential: seeing it (a
 * proxy log, a shared machine) gives at most the rest of one session, which sign-out,
 * the idle and absolute expiries, a revoked API key or a changed admin token all end.
 *
 * The cookie is HttpOnly (no script reads it), SameSite=Strict (no other site's page
 * sends it), scoped to /console, with a Max-Age of the absolute lifetime, and Secure when
 * the browser reached us over HTTPS: a TLS socket here, or a TLS proxy in front that says
 * so with `X-Forwarded-Proto: https`. That header is honoured for this flag only, and
 * from anyone (Fastify's trustProxy stays off, so request.ip and request.protocol are the
 * socket's): it can only make the cookie stricter, and a client that forges it over
 * plain HTTP only loses its own session.
 */
export const SESSION_COOKIE = 'tally_console';

export const SESSION_LIFETIME: SessionLifetime = { idleSeconds: 30 * 60, absoluteSeconds: 12 * 60 * 60 };

/** 32 random bytes, base64url: the only copy outside the browser is its hash. */
export function newSessionId(): string {
  return randomBytes(32).toString('base64url');
}

/** A random 256-bit id needs no salt or KDF: one SHA-256 is enough to store it. */
export function hashSessionId(id: string): Buffer {
  return createHash('sha256').update(id).digest();
}

/**
 * Which admin token an admin session was started with, without storing it: an HMAC
 * keyed by the server secret (which never enters the database), so a dump of the table
 * gives nothing to guess a weak admin token against. Null when no admin token is set.
 */
export function adminFingerprint(serverSecret: Buffer, adminToken: string | null): Buffer | null {
  if (!adminToken) return null;
  return createHmac('sha256', serverSecret).update('tally console admin session\0').update(adminToken).digest();
}

/** The session id the request's cookie carries, if any. */
export function sessionIdOf(request: FastifyRequest): string | null {
  const header = request.headers.cookie ?? '';
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at < 0 || part.slice(0, at).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(at + 1).trim();
    return /^[A-Za-z0-9_-]{43}$/.test(value) ? value : null;
  }
  return null;
}

export function overHttps(request: FastifyRequest): boolean {
  const forwarded = request.headers['x-forwarded-proto'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase();
  return request.protocol === 'https' || first === 'https';
}

function cookie(request: FastifyRequest, value: string, maxAge: number): string {
  return `${SESSION_COOKIE}=${value}; Path=/console; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${overHttps(request) ? '; Secure' : ''}`;
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, id: string, lifetime: SessionLifetime): void {
  reply.header('set-cookie', cookie(request, id, lifetime.absoluteSeconds));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', cookie(request, '', 0));
}

/**
 * Every console POST (sign-in, sign-out, every action) must come from a console page:
 * the browser says so with `Sec-Fetch-Site: same-origin`, or, where it sends no fetch
 * metadata, with an Origin naming this host. A POST with neither, or with another site's,
 * is refused: SameSite=Strict already keeps the cookie off other sites' forms, and this
 * also covers sign-in (no cookie yet: login CSRF) and browsers that ignore SameSite.
 */
export function sameOrigin(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin';
  const origin = request.headers.origin;
  if (!origin || !request.headers.host) return false;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}
