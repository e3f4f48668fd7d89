import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { Pool } from '../db/pool.js';
import type { Metrics } from './metrics.js';
import type { ProviderLookup } from '../catalog/provider-cache.js';
import type { DeliveryWriter } from '../intake/delivery-writer.js';

/**
 * The app as route modules see it: request body, params, query string and headers are
 * typed from each route's TypeBox schema, so a route declares its shape once. What a
 * handler returns is checked against its response schemas; a handler that answers
 * through the reply (runIdempotent) is async, so the reply it returns is awaited.
 */
export type ApiApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** What every route module needs. */
export interface ApiContext {
  pool: Pool;
  metrics: Metrics;
  /** how intake finds a webhook's provider (serve: a ProviderCache) */
  providers: ProviderLookup;
  /** intake's group-committed writes, with the command's limits (ApiSettings.intake) */
  deliveries: DeliveryWriter;
}
