import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Signing in keeps the credential (the admin token or a tenant's API key) in a cookie
 * scoped to /console: HttpOnly (no script reads it), SameSite=Strict (no other site's form
 * can ride on it), Secure when served over HTTPS. Every page calls the JSON API with it, so
 * the console can show and do exactly what that credential may over the API, nothing more.
 */
export const SESSION_COOKIE = 'tally_console';

export function credentialOf(request: FastifyRequest): string | null {
  const header = request.headers.cookie ?? '';
  for (const part of header.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE) {
      try {
        const credential = Buffer.from(value.join('='), 'base64url').toString('utf8');
        return credential.length > 0 ? credential : null;
      } catch {
        return null;
      }
    }
  }
  return null;
}

function secure(request: FastifyRequest): string {
  return request.protocol === 'https' ? '; Secure' : '';
}

export function startSession(request: FastifyRequest, reply: FastifyReply, credential: string): void {
  reply.header(
    'set-cookie',
    `${SESSION_COOKIE}=${Buffer.from(credential).toString('base64url')}; Path=/console; HttpOnly; SameSite=Strict${secure(request)}`,
  );
}

export function endSession(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', `${SESSION_COOKIE}=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0${secure(request)}`);
}

/**
 * A form posted from another origin is refused even if a browser sent the cookie: the
 * Origin header, when present, must be this server's.
 */
export function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (!origin) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}
