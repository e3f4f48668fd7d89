import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import { ConsoleApi, ConsoleApiError, roleOf } from './api.js';
import { html, type Html } from './html.js';
import { page, type PageContext } from './layout.js';
import { credentialOf, endSession, sameOrigin, startSession } from './session.js';
import type { PageHandler } from './page-handler.js';
import { overviewPage } from './pages/overview.js';
import { tenantPage, tenantsPage } from './pages/tenants.js';
import { statementDownload, walletPage, walletsPage } from './pages/wallets.js';
import { jobPage, jobsPage } from './pages/jobs.js';
import { exceptionsPage, repairConfirmPage, repairRun, resolveException } from './pages/exceptions.js';
import { deadLettersPage, discardDeadLetter, retryDeadLetter } from './pages/dead-letters.js';

/** The files a page loads: ours from assets/console/, uPlot from its package. */
function assets(): Map<string, { body: Buffer; type: string }> {
  const require = createRequire(import.meta.url);
  const own = (name: string) => readFileSync(new URL(`../../assets/console/${name}`, import.meta.url));
  return new Map([
    ['console.css', { body: own('console.css'), type: 'text/css; charset=utf-8' }],
    ['charts.js', { body: own('charts.js'), type: 'text/javascript; charset=utf-8' }],
    ['uPlot.min.js', { body: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js')), type: 'text/javascript; charset=utf-8' }],
    ['uPlot.min.css', { body: readFileSync(require.resolve('uplot/dist/uPlot.min.css')), type: 'text/css; charset=utf-8' }],
  ]);
}

/** No inline script runs; pages pass data to charts.js in JSON blocks. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

function errorPage(context: PageContext | null, status: number, message: string): Html {
  return page(
    status === 404 ? 'Not found' : 'Something went wrong',
    context,
    html`<div class="error">${message}</div>
      <p><a href="/console">Back to the overview</a></p>`,
  );
}

/**
 * The operator console: server-rendered pages under /console, signed in with the admin
 * token (everything) or a tenant's API key (its own wallets and jobs). Every read and every
 * action goes through the JSON API in process, with that credential.
 */
export async function consoleRoutes(app: FastifyInstance): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(formbody);
    const files = assets();

    scope.get('/console/assets/:name', { schema: { hide: true } }, async (request, reply) => {
      const file = files.get((request.params as { name: string }).name);
      if (!file) return reply.code(404).type('text/plain').send('not found');
      return reply.type(file.type).header('cache-control', 'public, max-age=3600').send(file.body);
    });

    scope.get('/console/sign-in', { schema: { hide: true } }, async (request, reply) => {
      const failed = (request.query as { failed?: string }).failed !== undefined;
      return reply.headers(SECURITY_HEADERS).type('text/html; charset=utf-8').send(signInPage(failed).text);
    });

    scope.post('/console/sign-in', { schema: { hide: true } }, async (request, reply) => {
      const credential = String((request.body as { token?: string } | null)?.token ?? '').trim();
      if (!sameOrigin(request) || !credential) return reply.redirect('/console/sign-in?failed', 303);
      const role = await roleOf(new ConsoleApi(app, credential));
      if (!role) return reply.redirect('/console/sign-in?failed', 303);
      startSession(request, reply, credential);
      return reply.redirect('/console', 303);
    });

    scope.post('/console/sign-out', { schema: { hide: true } }, async (request, reply) => {
      endSession(request, reply);
      return reply.redirect('/console/sign-in', 303);
    });

    const route = (method: 'GET' | 'POST', path: string, handler: PageHandler) =>
      scope.route({
        method,
        url: path,
        schema: { hide: true },
        handler: async (request, reply) => {
          reply.headers(SECURITY_HEADERS);
          const credential = credentialOf(request);
          const api = credential ? new ConsoleApi(app, credential) : null;
          const role = api ? await roleOf(api) : null;
          if (!api || !role) {
            endSession(request, reply);
            return reply.redirect('/console/sign-in', 303);
          }
          const context: PageContext = { role, path: request.url.split('?')[0]! };
          if (method === 'POST' && !sameOrigin(request))
            return reply
              .code(403)
              .type('text/html; charset=utf-8')
              .send(errorPage(context, 403, 'this form was sent from another site').text);
          try {
            const body = await handler({ api, role, request, reply, context });
            if (body === undefined || reply.sent) return reply;
            return reply.type('text/html; charset=utf-8').send(body.text);
          } catch (error) {
            if (!(error instanceof ConsoleApiError)) throw error;
            const status = error.answer.status >= 400 && error.answer.status < 500 ? error.answer.status : 502;
            return reply
              .code(status)
              .type('text/html; charset=utf-8')
              .send(errorPage(context, status, error.message).text);
          }
        },
      });

    route('GET', '/console', overviewPage);
    route('GET', '/console/tenants', adminOnly(tenantsPage));
    route('GET', '/console/tenants/:id', adminOnly(tenantPage));
    route('GET', '/console/wallets', walletsPage);
    route('GET', '/console/wallets/:id', walletPage);
    route('GET', '/console/wallets/:id/statement.csv', statementDownload);
    route('GET', '/console/jobs', jobsPage);
    route('GET', '/console/jobs/:id', jobPage);
    route('GET', '/console/exceptions', adminOnly(exceptionsPage));
    route('POST', '/console/exceptions/:id/resolve', adminOnly(resolveException));
    route('GET', '/console/repair', adminOnly(repairConfirmPage));
    route('POST', '/console/repair', adminOnly(repairRun));
    route('GET', '/console/dead-letters', adminOnly(deadLettersPage));
    route('POST', '/console/dead-letters/:provider/:key/retry', adminOnly(retryDeadLetter));
    route('POST', '/console/dead-letters/:provider/:key/discard', adminOnly(discardDeadLetter));
  });
}

/** Operator pages answer a tenant with the same 404 as an unknown page: nothing to learn from it. */
function adminOnly(handler: PageHandler): PageHandler {
  return async (pageRequest) => {
    if (pageRequest.role.kind !== 'admin') {
      pageRequest.reply.code(404);
      return errorPage(pageRequest.context, 404, 'no such page');
    }
    return handler(pageRequest);
  };
}

function signInPage(failed: boolean): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Sign in · Tally</title>
        <link rel="stylesheet" href="/console/assets/console.css" />
      </head>
      <body>
        <nav><span class="brand">Tally</span></nav>
        <form class="sign-in" method="post" action="/console/sign-in">
          <h1>Sign in to the console</h1>
          ${failed ? html`<div class="error">That token was not accepted. Use the admin token (printed by <code>tally serve</code>, kept in <code>.tally/admin-token</code>) or a tenant's API key.</div>` : ''}
          <label for="token">Admin token or tenant API key</label>
          <input id="token" name="token" type="password" autocomplete="current-password" required autofocus />
          <p><button class="primary" type="submit">Sign in</button></p>
          <p class="muted">The operator sees everything; a tenant signing in with its API key sees only its own wallets and jobs.</p>
        </form>
      </body>
    </html>`;
}
