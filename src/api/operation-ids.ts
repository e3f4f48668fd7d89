/**
 * The name of every operation in GET /openapi.json, by method and route as Fastify
 * registers it. Generated clients name their methods after these (openapi-fetch's
 * types, openapi-generator's `createTenant()`), so a name, once published, stays: rename
 * only with a new API version. A route missing here is published without an operationId,
 * which test/e2e/openapi-document.test.ts refuses, as it refuses two routes of one name.
 *
 * `security` is given here only for the few operations that take no bearer token (their
 * routes declare no scheme), with the reason, which the document shows as the operation's
 * description. Every other route declares `security: bearerAuth` itself; a route that
 * declares none and is not listed here keeps none in the document, which the test and
 * `redocly lint` refuse, rather than being published as open.
 */
export interface OperationName {
  id: string;
  security?: { requirements: Record<string, string[]>[]; why: string };
}

/** No credential at all: anyone may call it. */
const open = (why: string): OperationName['security'] => ({ requirements: [], why });

export const OPERATIONS: Readonly<Record<string, OperationName>> = {
  // meta and operations
  'GET /': { id: 'openConsole', security: open('No credential: a redirect to the console, which has its own sign-in.') },
  'GET /v1': { id: 'getServiceIndex', security: open('No credential: it tells any program what this service is.') },
  'GET /healthz': { id: 'getHealth', security: open('No credential: load balancers probe it.') },
  'GET /metrics': {
    id: 'getMetrics',
    security: {
      requirements: [{}, { metricsToken: [] }],
      why: 'Open, unless TALLY_METRICS_TOKEN is set: then that token, as a bearer token.',
    },
  },
  'GET /v1/overview': { id: 'getOverview' },

  // tenants and their keys
  'POST /v1/tenants': { id: 'createTenant' },
  'GET /v1/tenants': { id: 'listTenants' },
  'GET /v1/tenants/:id': { id: 'getTenant' },
  'POST /v1/api-keys': { id: 'createApiKey' },
  'GET /v1/api-keys': { id: 'listApiKeys' },
  'DELETE /v1/api-keys/:id': { id: 'revokeApiKey' },
  'PUT /v1/tenants/:id/spend-limits': { id: 'setSpendLimit' },
  'GET /v1/tenants/:id/spend-limits': { id: 'listSpendLimits' },
  'DELETE /v1/tenants/:id/spend-limits/:limit_id': { id: 'deleteSpendLimit' },

  // providers and prices
  'POST /v1/providers': { id: 'createProvider' },
  'GET /v1/providers': { id: 'listProviders' },
  'PATCH /v1/providers/:name': { id: 'updateProvider' },
  'PUT /v1/prices/:model': { id: 'publishPrice' },
  'GET /v1/prices': { id: 'listPrices' },

  // wallets
  'POST /v1/wallets': { id: 'createWallet' },
  'GET /v1/wallets': { id: 'listWallets' },
  'GET /v1/wallets/:id': { id: 'getWallet' },
  'GET /v1/wallets/:id/entries': { id: 'listWalletEntries' },
  'GET /v1/wallets/:id/statement': { id: 'getWalletStatement' },
  'POST /v1/wallets/:id/credits': { id: 'creditWallet' },
  'POST /v1/wallets/:id/thresholds': { id: 'createWalletThreshold' },
  'GET /v1/wallets/:id/thresholds': { id: 'listWalletThresholds' },
  'DELETE /v1/wallets/:id/thresholds/:threshold_id': { id: 'deleteWalletThreshold' },

  // credit grants
  'POST /v1/wallets/:id/grants': { id: 'createGrant' },
  'GET /v1/wallets/:id/grants': { id: 'listWalletGrants' },
  'GET /v1/grants/:id': { id: 'getGrant' },
  'POST /v1/grants/:id/void': { id: 'voidGrant' },

  // jobs, their settlements, events and alerts
  'POST /v1/jobs': { id: 'submitJob' },
  'GET /v1/jobs': { id: 'listJobs' },
  'GET /v1/jobs/:id': { id: 'getJob' },
  'PATCH /v1/jobs/:id': { id: 'updateJob' },
  'POST /v1/jobs/:id/cancel': { id: 'cancelJob' },
  'POST /v1/jobs/:id/extensions': { id: 'extendJob' },
  'POST /v1/jobs/:id/adjustments': { id: 'adjustJob' },
  'GET /v1/settlements': { id: 'listSettlements' },
  'GET /v1/events': { id: 'listEvents' },
  'POST /v1/events/:provider/:event_key/retry': { id: 'retryEvent' },
  'POST /v1/events/:provider/:event_key/discard': { id: 'discardEvent' },
  'GET /v1/alerts': { id: 'listAlerts' },

  // inbound webhooks
  'POST /v1/webhooks/:provider': {
    id: 'receiveProviderWebhook',
    security: open(
      "No bearer token: the provider's signature over the body authenticates it (Standard Webhooks headers, or fal's Ed25519).",
    ),
  },

  // payments (Stripe)
  'PUT /v1/payment-settings/stripe': { id: 'setStripeSettings' },
  'GET /v1/payment-settings/stripe': { id: 'getStripeSettings' },
  'POST /v1/payments/stripe/webhook': {
    id: 'receiveStripeEvent',
    security: open("No bearer token: Stripe's signature over the body (Stripe-Signature) authenticates it."),
  },
  'POST /v1/wallets/:id/checkout-sessions': { id: 'createCheckoutSession' },
  'PUT /v1/wallets/:id/auto-recharge': { id: 'setAutoRecharge' },
  'GET /v1/wallets/:id/auto-recharge': { id: 'getAutoRecharge' },

  // reconciliation
  'POST /v1/reconciliation/runs': { id: 'runReconciliation' },
  'GET /v1/reconciliation/runs/:id': { id: 'getReconciliationRun' },
  'GET /v1/reconciliation/exceptions': { id: 'listReconciliationExceptions' },
  'POST /v1/reconciliation/exceptions/:id/resolve': { id: 'resolveReconciliationException' },
  'POST /v1/provider-usage': { id: 'importProviderUsage' },

  // outbound webhooks
  'POST /v1/webhook-endpoints': { id: 'createWebhookEndpoint' },
  'GET /v1/webhook-endpoints': { id: 'listWebhookEndpoints' },
  'GET /v1/webhook-endpoints/:id': { id: 'getWebhookEndpoint' },
  'PATCH /v1/webhook-endpoints/:id': { id: 'updateWebhookEndpoint' },
  'POST /v1/webhook-endpoints/:id/rotate-secret': { id: 'rotateWebhookEndpointSecret' },
  'POST /v1/webhook-endpoints/:id/ping': { id: 'pingWebhookEndpoint' },
  'GET /v1/webhook-endpoints/:id/attempts': { id: 'listWebhookEndpointAttempts' },
  'POST /v1/webhook-endpoints/:id/replay': { id: 'replayWebhookEndpointMessages' },
  'POST /v1/webhook-messages/:id/replay': { id: 'replayWebhookMessage' },
};

/** The table's entry for a route (`GET`, `/v1/wallets/:id`), if it has one. */
export function operationOf(method: string, url: string): OperationName | undefined {
  return OPERATIONS[`${method} ${url}`];
}
