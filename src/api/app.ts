import Fastify, { LogController, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { Pool } from '../db/pool.js';
import { ErrorResponse } from './schemas.js';
import { loadServerSecret } from './server-secret.js';
import { apiSettingsOf, type ApiSettings } from './api-settings.js';
import { ApiError, clientError, frameworkError, installErrorHandler } from './errors.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json-depth.js';
import { registerHealth } from './health.js';
import { closeRequestSchemas } from './closed-schemas.js';
import { declareCommonErrors } from './common-errors.js';
import { checkResponses } from './response-check.js';
import { openApiOptions } from './openapi-document.js';
import { BODY_LIMIT_BYTES } from './limits.js';
import { REQUEST_ID_LOG_LABEL, requestIdOf, returnRequestId, withRequestId } from './request-id.js';
import { createMetrics, type Metrics } from './metrics.js';
import { uncachedProviders, type ProviderLookup } from '../catalog/provider-cache.js';
import { DeliveryWriter } from '../intake/delivery-writer.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ApiApp, ApiContext } from './context.js';
import { tenantRoutes } from './routes/tenants.js';
import { providerRoutes } from './routes/providers.js';
import { priceRoutes } from './routes/prices.js';
import { walletRoutes } from './routes/wallets.js';
import { grantRoutes } from './routes/grants.js';
import { jobRoutes } from './routes/jobs.js';
import { jobAdjustmentRoutes } from './routes/job-adjustments.js';
import { webhookRoutes } from './routes/webhooks.js';
import { operationRoutes } from './routes/operations.js';
import { reconciliationRoutes } from './routes/reconciliation.js';
import { homeRoutes } from './routes/home.js';
import { overviewRoutes } from './routes/overview.js';
import { listRoutes } from './routes/lists.js';
import { apiKeyRoutes } from './routes/api-keys.js';
import { webhookEndpointRoutes } from './routes/webhook-endpoints.js';
import { thresholdRoutes } from './routes/thresholds.js';
import { spendLimitRoutes } from './routes/spend-limits.js';
import { paymentRoutes } from './routes/payments.js';
import { consoleRoutes } from '../console/routes.js';

export interface AppOptions {
  pool: Pool;
  metrics?: Metrics;
  /** how intake finds a webhook's provider; absent: read from the table at every delivery */
  providers?: ProviderLookup;
  logLevel?: string;
  /** where log lines go (default stdout): `tally demo` counts the refusals it provoked on purpose */
  logStream?: { write(line: string): void };
  /** seals stored idempotent answers (the command loads it from TALLY_SECRET_KEY or the data folder); absent: ./.tally/secret-key */
  serverSecret?: Buffer;
  /** check every answer against its route's response schema (TALLY_CHECK_RESPONSES=1, the tests) */
  checkResponses?: boolean;
  /** admin and metrics tokens, destination policy, intake limits, repairs (from the configuration); none given: no admin, open metrics, the defaults */
  settings?: Partial<ApiSettings>;
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: options.logLevel ?? 'info',
      ...(options.logStream ? { stream: options.logStream } : {}),
      // Credentials never reach the logs.
      // A provider's api_key is write-only: should any object holding one be logged, it is censored.
      redact: [
        'req.headers.authorization',
        'req.headers["webhook-signature"]',
        'req.headers["x-fal-webhook-signature"]',
        'api_key',
        '*.api_key',
      ],
    },
    bodyLimit: BODY_LIMIT_BYTES,
    // x-request-id: kept when the caller sent a sane one, made otherwise; in every log line of the request.
    requestIdHeader: false,
    genReqId: requestIdOf,
    // One line per request, when it is answered (logRequest below), not Fastify's two:
    // at webhook rates the 'incoming request' line cost as much as the rest of the logging.
    logController: new LogController({ requestIdLogLabel: REQUEST_ID_LOG_LABEL, disableRequestLogging: true }),
    // Long enough for any model name (MODEL_NAME_MAX_LENGTH characters, percent-encoded);
    // a longer or badly encoded path parameter is answered by frameworkError in the usual shape.
    routerOptions: { maxParamLength: 4096 },
    frameworkErrors: withRequestId(frameworkError),
    clientErrorHandler: clientError,
    // HTTP/1.0 clients may omit Host, and Tally serves no virtual hosts: such a request is
    // answered like any other instead of by Node's bodiless 400.
    http: { requireHostHeader: false },
    ajv: {
      // Amounts must arrive as strings: no coercion of 12 into "12". Query strings are
      // declared as strings and parsed by the routes. verbose: each error carries the
      // schema and value that failed, from which validation-errors.ts writes its message.
      customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false, verbose: true },
    },
  });
  app.decorateRequest('principal', null);
  app.decorate('serverSecret', options.serverSecret ?? (await loadServerSecret({ secretKey: undefined, dataDir: '.tally' })));
  app.decorate('apiSettings', apiSettingsOf(options.settings ?? {}));
  await app.register(swagger, openApiOptions());
  app.addSchema(ErrorResponse);
  installErrorHandler(app);
  returnRequestId(app);
  logRequest(app);
  closeRequestSchemas(app);
  declareCommonErrors(app);
  if (options.checkResponses) checkResponses(app);
  // Before validation and before anything recursive sees the body (webhook bodies are
  // raw bytes here; their adapters check the same cap after verifying the signature).
  app.addHook('preValidation', async (request) => {
    const body = request.body;
    if (body !== null && typeof body === 'object' && !Buffer.isBuffer(body) && nestsDeeperThan(body)) {
      throw new ApiError(400, 'json_too_deep', `the body nests deeper than ${MAX_JSON_DEPTH} levels`);
    }
  });
  const context: ApiContext = {
    pool: options.pool,
    metrics: options.metrics ?? createMetrics(options.pool),
    providers: options.providers ?? uncachedProviders(options.pool, app.serverSecret),
    deliveries: new DeliveryWriter(options.pool, app.apiSettings.intake),
  };
  registerHealth(app, options.pool);
  // Types only: validation stays with the ajv configured above.
  const api: ApiApp = app.withTypeProvider<TypeBoxTypeProvider>();
  tenantRoutes(api, context);
  providerRoutes(api, context);
  priceRoutes(api, context);
  walletRoutes(api, context);
  grantRoutes(api, context);
  jobRoutes(api, context);
  jobAdjustmentRoutes(api, context);
  webhookRoutes(api, context);
  operationRoutes(api, context);
  reconciliationRoutes(api, context);
  homeRoutes(api);
  overviewRoutes(api, context);
  listRoutes(api, context);
  apiKeyRoutes(api, context);
  webhookEndpointRoutes(api, context);
  thresholdRoutes(api, context);
  spendLimitRoutes(api, context);
  paymentRoutes(api, context);
  await consoleRoutes(app, options.pool);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}

/** The request's one line: what was asked (method, url, host, remote address), the status and the time it took. */
function logRequest(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    request.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  });
}
