import type { ApiApp, ApiContext } from '../context.js';
import { alertListRoutes } from './alert-list.js';
import { catalogListRoutes } from './catalog-list.js';
import { eventListRoutes } from './event-list.js';
import { exceptionListRoutes } from './exception-list.js';
import { jobListRoutes } from './job-list.js';
import { settlementListRoutes } from './settlement-list.js';

/**
 * The list APIs (docs/CONTRACT.md "Lists"): `{data, has_more}`, newest first, `limit`,
 * `starting_after` / `ending_before`, and filters that are honoured or refused (400).
 * GET /v1/wallets and the wallet entries are with the wallet routes.
 */
export function listRoutes(app: ApiApp, context: ApiContext): void {
  catalogListRoutes(app, context);
  jobListRoutes(app, context);
  settlementListRoutes(app, context);
  eventListRoutes(app, context);
  alertListRoutes(app, context);
  exceptionListRoutes(app, context);
}
