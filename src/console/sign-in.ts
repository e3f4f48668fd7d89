import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { principalOfCredential } from '../catalog/credentials.js';
import type { Principal } from '../principal.js';
import type { Queryable } from '../db/pool.js';
import { html, type Html } from './html.js';
import { errorPage, head, SECURITY_HEADERS, type PageContext } from './layout.js';
import { deleteExpiredSessions, deleteSession, insertSession, useSession } from './session-store.js';
import { SignInLimiter } from './sign-in-limit.js';
import {
  adminFingerprint,
  clearSessionCookie,
  hashSessionId,
  newSessionId,
  sameOrigin,
  SESSION_LIFETIME,
  sessionIdOf,
  setSessionCookie,
} from './session.js';

export function htmlAnswer(reply: FastifyReply, status: number, body: Html): FastifyReply {
  return reply.code(status).headers(SECURITY_HEADERS).type('text/html; charset=utf-8').send(body.text);
}

/** 403 for a POST that did not come from a console page (session.ts, sameOrigin). */
export function crossSiteRefusal(reply: FastifyReply, context: PageContext | null): FastifyReply {
  return htmlAnswer(
    reply,
    403,
    errorPage(
      context,
      403,
      'This form did not come from a console page (no matching Origin or Sec-Fetch-Site), so it was refused. Open the console and try again.',
    ),
  );
}

/** The principal of the request's session, moving its idle expiry; null when it has none that is live. */
export async function sessionPrincipal(request: FastifyRequest, db: Queryable): Promise<Principal | null> {
  const id = sessionIdOf(request);
  if (!id) return null;
  const found = await useSession(
    db,
    hashSessionId(id),
    adminFingerprint(request.server.serverSecret, request.server.apiSettings.adminToken),
    SESSION_LIFETIME,
  );
  if (!found) return null;
  return found.kind === 'admin' ? found : { kind: 'tenant', tenantId: found.tenantId };
}

export function signInRoutes(scope: FastifyInstance, db: Queryable, limiter = new SignInLimiter()): void {
  scope.get('/console/sign-in', { schema: { hide: true } }, async (request, reply) => {
    const failed = (request.query as { failed?: string }).failed !== undefined;
    return htmlAnswer(reply, 200, signInPage(failed));
  });

  scope.post('/console/sign-in', { schema: { hide: true } }, async (request, reply) => {
    if (!sameOrigin(request)) return crossSiteRefusal(reply, null);
    // Checked before the credential is looked at: past the limit, a right guess is refused too.
    const retryAfter = limiter.retryAfterSeconds(request.ip);
    if (retryAfter > 0) {
      reply.header('retry-after', String(retryAfter));
      const wait = `${retryAfter} second${retryAfter === 1 ? '' : 's'}`;
      return htmlAnswer(reply, 429, errorPage(null, 429, `Too many failed sign-ins from your address: try again in ${wait}.`));
    }
    const credential = String((request.body as { token?: string } | null)?.token ?? '').trim();
    const principal = credential ? await principalOfCredential(db, credential, request.server.apiSettings.adminToken ?? undefined) : null;
    if (!principal) {
      limiter.recordFailure(request.ip);
      return reply.redirect('/console/sign-in?failed', 303);
    }
    await deleteExpiredSessions(db);
    const id = newSessionId();
    await insertSession(db, {
      idHash: hashSessionId(id),
      principal,
      adminFingerprint:
        principal.kind === 'admin' ? adminFingerprint(request.server.serverSecret, request.server.apiSettings.adminToken) : null,
      lifetime: SESSION_LIFETIME,
    });
    setSessionCookie(request, reply, id, SESSION_LIFETIME);
    return reply.redirect('/console', 303);
  });

  // Checked like every other POST: a forged sign-out would be a nuisance, not a leak, but
  // no console POST is taken from another site.
  scope.post('/console/sign-out', { schema: { hide: true } }, async (request, reply) => {
    if (!sameOrigin(request)) return crossSiteRefusal(reply, null);
    const id = sessionIdOf(request);
    if (id) await deleteSession(db, hashSessionId(id));
    clearSessionCookie(request, reply);
    return reply.redirect('/console/sign-in', 303);
  });
}

function signInPage(failed: boolean): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Sign in · Tally</title>
        ${head()}
      </head>
      <body>
        <nav><span class="brand">Tally</span></nav>
        <form class="sign-in" method="post" action="/console/sign-in">
          <h1>Sign in to the console</h1>
          ${failed ? html`<div class="error">That token was not accepted. Use the admin token (printed by <code>tally serve</code>, kept in <code>.tally/admin-token</code>) or a tenant's API key.</div>` : ''}
          <label for="token">Admin token or tenant API key</label>
          <input id="token" name="token" type="password" autocomplete="current-password" required autofocus />
          <p><button class="primary" type="submit">Sign in</button></p>
          <p class="muted">
            The operator sees everything; a tenant signing in with its API key sees only its own wallets and jobs. A session ends at
            sign-out, after 30 minutes unused, or 12 hours after signing in.
          </p>
        </form>
      </body>
    </html>`;
}
