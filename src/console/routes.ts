import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import type { Queryable } from '../db/pool.js';
import { ConsoleApi, ConsoleApiError } from './api.js';
import { errorPage, SECURITY_HEADERS, type PageContext } from './layout.js';
import { clearSessionCookie, sameOrigin } from './session.js';
import { crossSiteRefusal, sessionPrincipal, signInRoutes } from './sign-in.js';
import type { PageHandler } from './page-handler.js';
import { overviewPage } from './pages/overview.js';
import { tenantPage, tenantsPage } from './pages/tenants.js';
import { statementDownload, walletPage, walletsPage } from './pages/wallets.js';
import { jobPage, jobsPage } from './pages/jobs.js';
import { exceptionsPage, repairConfirmPage, repairRun, resolveException } from './pages/exceptions.js';
import { deadLettersPage, discardDeadLetter, retryDeadLetter } from './pages/dead-letters.js';
import { alertsPage } from './pages/alerts.js';

/** The files a page loads: ours from assets/console/, uPlot from its package. */
function assets(): Map<string, { body: Buffer; type: string }> {
  const require = createRequire(import.meta.url);
  const own = (name: string) => readFileSync(new URL(`../../assets/console/${name}`, import.meta.url));
  return new Map([
    ['console.css', { body: own('console.css'), type: 'text/css; charset=utf-8' }],
    ['charts.js', { body: own('charts.js'), type: 'text/javascript; charset=utf-8' }],
    ['favicon.svg', { body: own('favicon.svg'), type: 'image/svg+xml' }],
    ['uPlot.min.js', { body: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js')), type: 'text/javascript; charset=utf-8' }],
    ['uPlot.min.css', { body: readFileSync(require.resolve('uplot/dist/uPlot.min.css')), type: 'text/css; charset=utf-8' }],
  ]);
}

/**
 * The operator console: server-rendered pages under /console, signed in with the admin
 * token (everything) or a tenant's API key (its own wallets and jobs) for a session
 * (session.ts). Every read and every action goes through the JSON API in process, as the
 * session's principal (api.ts); every POST must come from a console page (sameOrigin).
 */
export async function consoleRoutes(app: FastifyInstance, db: Queryable): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(formbody);
    const files = assets();

    scope.get('/console/assets/:name', { schema: { hide: true } }, async (request, reply) => {
      const file = files.get((request.params as { name: string }).name);
      if (!file) return reply.code(404).type('text/plain').send('not found');
      return reply.type(file.type).header('cache-control', 'public, max-age=3600').send(file.body);
    });
    // Browsers ask for /favicon.ico where a page declares no icon (and some do regardless).
    scope.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) => {
      const icon = files.get('favicon.svg')!;
      return reply.type(icon.type).header('cache-control', 'public, max-age=86400').send(icon.body);
    });

    signInRoutes(scope, db);

    const route = (method: 'GET' | 'POST', path: string, handler: PageHandler) =>
      scope.route({
        method,
        url: path,
        schema: { hide: true },
        handler: async (request, reply) => {
          reply.headers(SECURITY_HEADERS);
          // Before the session is looked up: a forged POST costs no database work.
          if (method === 'POST' && !sameOrigin(request)) return crossSiteRefusal(reply, null);
          const principal = await sessionPrincipal(request, db);
          if (!principal) {
            clearSessionCookie(request, reply);
            return reply.redirect('/console/sign-in', 303);
          }
          const api = new ConsoleApi(app, principal);
          const role = principal;
          const context: PageContext = { role, path: request.url.split('?')[0]! };
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
    route('GET', '/console/alerts', alertsPage);
    // Any other console path: a console page saying so (behind the sign-in like every
    // page), not the API's JSON 404. Fastify prefers every other route to a wildcard.
    route('GET', '/console/*', noSuchPage);
  });
}

/**
 * A console path that names no page: a 404 console page, with the nav and a way home.
 * Also what a tenant gets for an operator's page, so it learns nothing from it.
 */
const noSuchPage: PageHandler = async ({ reply, context }) => {
  reply.code(404);
  return errorPage(context, 404, 'There is no such page.');
};

/** Operator pages answer a tenant with the same 404 as an unknown page: nothing to learn from it. */
function adminOnly(handler: PageHandler): PageHandler {
  return async (pageRequest) => (pageRequest.role.kind === 'admin' ? handler(pageRequest) : noSuchPage(pageRequest));
}
