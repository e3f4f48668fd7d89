// Generated from GET /openapi.json by openapi-typescript (test/e2e/openapi-document.test.ts): do not edit.
// After an API change: npx vitest run test/e2e/openapi-document.test.ts -u

export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * 200 once the database answers and its migrations are applied; 503 otherwise (for load balancers)
         * @description No credential: load balancers probe it.
         */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Tenants, newest first; the cursor is a tenant's id */
        get: operations["listTenants"];
        put?: never;
        /** Create a tenant and its API key (shown only in this answer and its idempotent replay) */
        post: operations["createTenant"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/providers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Providers, newest registered first, without their secrets or API keys; the cursor is a provider's name */
        get: operations["listProviders"];
        put?: never;
        /** Register a provider that sends webhooks */
        post: operations["createProvider"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/providers/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Change a provider's secrets, keys, base URL or policies */
        patch: operations["updateProvider"];
        trace?: never;
    };
    "/v1/prices/{model}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Publish a new immutable price version of a model (URL-encode "/" in model names as %2F); the current prices again answer 200 with the current version */
        put: operations["publishPrice"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Wallets, newest first (a tenant's own; the admin's all, or one tenant's); the cursor is a wallet's id */
        get: operations["listWallets"];
        put?: never;
        /** Open the tenant's wallet in a currency (one per currency) */
        post: operations["createWallet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallets/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A wallet's balance, reserved and available amounts, now or (with ?at=) as of an instant */
        get: operations["getWallet"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallets/{id}/entries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The wallet's ledger entries, newest first, each with the wallet's holdings after it and what it changed (amount signed from the wallet's side; balance_change and available_change are what add up) */
        get: operations["listWalletEntries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallets/{id}/statement": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The wallet's statement over [from, to): opening, every entry with the running balance, closing, totals per type; CSV with Accept: text/csv (at most 10000 entries; a longer range in parts, which chain) */
        get: operations["getWalletStatement"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallets/{id}/credits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Top up a wallet after a payment (operator only). Idempotency-Key required: a credit is applied once, whenever retried */
        post: operations["creditWallet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallets/{id}/grants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A wallet's grants, newest first, with their status now; filters status and category; the cursor is a grant's id */
        get: operations["listWalletGrants"];
        put?: never;
        /** Give a wallet a grant of credit (operator only): paid or promotional, with a priority, a start and an expiry. Idempotency-Key required: a grant is created once, whenever retried */
        post: operations["createGrant"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/grants/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A grant: what it brought, what remains and is held, its status now (a tenant its own; the admin any) */
        get: operations["getGrant"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/grants/{id}/void": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Void a grant (operator only): its unheld remaining leaves the wallet at once (grant_void); shares held for jobs stay with them and leave when they return. A second void is 409 grant_voided */
        post: operations["voidGrant"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Jobs, newest first (a tenant its own; the admin all, or one tenant's with tenant_id); the cursor is a job id */
        get: operations["listJobs"];
        put?: never;
        /** Submit a job: reserves the price of its limits at the current price version, which the job pins */
        post: operations["submitJob"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A job with its settlements and events (a tenant its own; the admin any, with each event's error detail) */
        get: operations["getJob"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Set the provider's id for the job, once */
        patch: operations["updateJob"];
        trace?: never;
    };
    "/v1/jobs/{id}/extensions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Extend a running job's hold: its limits grow by `add` and its hold by the price difference at the pinned version, as the job's next extension; Idempotency-Key required */
        post: operations["extendJob"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Ask to cancel: the hold stays until the provider's terminal event or the cancel grace passes */
        post: operations["cancelJob"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/adjustments": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Operator: bill a captured or released job for this usage (its total charge becomes billable(usage) at its pinned price), as the job's next correction; Idempotency-Key required */
        post: operations["adjustJob"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics (docs/operations/metrics.md)
         * @description Open, unless TALLY_METRICS_TOKEN is set: then that token, as a bearer token.
         */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events/{provider}/{event_key}/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Queue a dead-lettered event again */
        post: operations["retryEvent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events/{provider}/{event_key}/discard": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Set a dead-lettered event aside for good; its job's hold no longer waits for it */
        post: operations["discardEvent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/reconciliation/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Run reconciliation now (optionally repairing through the normal keyed paths) */
        post: operations["runReconciliation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/reconciliation/runs/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A stored reconciliation run */
        get: operations["getReconciliationRun"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/reconciliation/exceptions/{id}/resolve": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Mark an exception reviewed; it no longer counts against clean */
        post: operations["resolveReconciliationException"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/provider-usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Import the provider's own usage records, compared by reconciliation (idempotent per import_id) */
        post: operations["importProviderUsage"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Redirects to the operator console, /console
         * @description No credential: a redirect to the console, which has its own sign-in.
         */
        get: operations["openConsole"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * What this service is and where to go next
         * @description No credential: it tells any program what this service is.
         */
        get: operations["getServiceIndex"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/overview": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Settlements over time and what needs attention now (a tenant: its own; the admin: everything). The console's overview */
        get: operations["getOverview"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A tenant */
        get: operations["getTenant"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prices": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Price versions, one object per version, newest published first, each marked current or superseded; the cursor is a version's id */
        get: operations["listPrices"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/settlements": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Settlements (captures, releases, adjustments) with their pricing snapshots, newest first; the cursor is a settlement's id */
        get: operations["listSettlements"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Provider events, newest received first, in every state (dead and discarded included; a tenant its own, without the raw error text); the cursor is an event id, provider/event_key */
        get: operations["listEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/alerts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Alerts settlements and duties raised (wallet_overdrawn, usage_exceeds_reservation, …), newest first; the cursor is an alert's id */
        get: operations["listAlerts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/reconciliation/exceptions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Reconciliation exceptions, the most recently first found first: open, resolved or cleared; the cursor is an exception's id */
        get: operations["listReconciliationExceptions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** API keys, newest first, revoked ones included (a tenant its own; the admin all, or one tenant's with tenant_id); never the key itself */
        get: operations["listApiKeys"];
        put?: never;
        /** Make a named API key for the tenant (the admin names the tenant); the key is shown only in this answer and its idempotent replay */
        post: operations["createApiKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/api-keys/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke an API key: refused (401) from the next request on; revoking again answers the same */
        delete: operations["revokeApiKey"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhook-endpoints": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Webhook endpoints, newest first (a tenant its own; the admin all, or one tenant's with tenant_id) */
        get: operations["listWebhookEndpoints"];
        put?: never;
        /** Register an endpoint for the tenant's outbound webhooks; its signing secret is shown only in this answer */
        post: operations["createWebhookEndpoint"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhook-endpoints/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One webhook endpoint */
        get: operations["getWebhookEndpoint"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Change what an endpoint receives, its description, or disable / enable it (enabling clears its failure count) */
        patch: operations["updateWebhookEndpoint"];
        trace?: never;
    };
    "/v1/webhook-endpoints/{id}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** A new signing secret, shown once; the old one keeps signing beside it for grace_seconds (default 24 h) */
        post: operations["rotateWebhookEndpointSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhook-endpoints/{id}/ping": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Queue a webhook.ping message to this endpoint only */
        post: operations["pingWebhookEndpoint"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhook-endpoints/{id}/attempts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The endpoint's delivery attempts, newest first: status, latency, the answer's first 1 KiB, the error */
        get: operations["listWebhookEndpointAttempts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhook-endpoints/{id}/replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send the messages of a time range again (created at or after since, before until): those it subscribes to and those it was sent */
        post: operations["replayWebhookEndpointMessages"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhook-messages/{id}/replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send a message again (same webhook-id) to the endpoints it was sent to, or to endpoint_id */
        post: operations["replayWebhookMessage"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallets/{id}/thresholds": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The wallet's thresholds, newest first */
        get: operations["listWalletThresholds"];
        put?: never;
        /** Add a threshold on the wallet's available amount: each fall below it sends one wallet.balance_low webhook (at most 10 per wallet) */
        post: operations["createWalletThreshold"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallets/{id}/thresholds/{threshold_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a threshold of the wallet */
        delete: operations["deleteWalletThreshold"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{id}/spend-limits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The tenant's spend limits with the current period's spend, newest first (the admin any tenant's, a tenant its own) */
        get: operations["listSpendLimits"];
        /** Set the tenant's spend limit for a currency and a UTC period (day or month): 201 when new, 200 when it replaces the one before */
        put: operations["setSpendLimit"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{id}/spend-limits/{limit_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Remove one of the tenant's spend limits (its spend goes on being counted) */
        delete: operations["deleteSpendLimit"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/payment-settings/stripe": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The Stripe settings, without the key or the secrets */
        get: operations["getStripeSettings"];
        /** Configure Stripe: the API key (write-only, sealed at rest) and the webhook secrets */
        put: operations["setStripeSettings"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallets/{id}/checkout-sessions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Top up a wallet by card: a grant awaiting payment and a Stripe Checkout Session for it (Idempotency-Key required) */
        post: operations["createCheckoutSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallets/{id}/auto-recharge": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The wallet's auto-recharge, its failures and whether a recharge is in flight */
        get: operations["getAutoRecharge"];
        /** Set the wallet's auto-recharge: below threshold, charge the latest checkout's card up to target (enabled: true also resets failures) */
        put: operations["setAutoRecharge"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{provider}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Receive a provider webhook (signed). 200 means durably accepted, not yet settled
         * @description No bearer token: the provider's signature over the body authenticates it (Standard Webhooks headers, or fal's Ed25519).
         */
        post: operations["receiveProviderWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/payments/stripe/webhook": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Receive a Stripe event (signed: Stripe-Signature). 200 means durably received, not yet applied
         * @description No bearer token: Stripe's signature over the body (Stripe-Signature) authenticates it.
         */
        post: operations["receiveStripeEvent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /**
         * Error
         * @description every error: a stable snake_case code, a message, and the field at fault when there is one
         */
        Error: {
            error: {
                /** @description stable, snake_case: branch on it */
                code: string;
                /** @description for people: what is wrong and what to send instead */
                message: string;
                /** @description the field, header or query parameter at fault, e.g. "amount" or "unit_prices.input_tokens" */
                param?: string;
            };
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "ok";
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listTenants: {
        parameters: {
            query?: {
                /** @description a whole number from 1 to 100 (default 20) */
                limit?: string;
                /** @description an object id: the page of objects after it (older) */
                starting_after?: string;
                /** @description an object id: the page of objects before it (newer) */
                ending_before?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            name: string;
                            /**
                             * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                             * @example {
                             *       "order_id": "ord_1234"
                             *     }
                             */
                            metadata: {
                                [key: string]: string;
                            };
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                        }[];
                        /** @description more objects follow in this direction */
                        has_more: boolean;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createTenant: {
        parameters: {
            query?: never;
            header?: {
                /** @description replays the first answer for the same key and body */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                    /**
                     * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                     * @example {
                     *       "order_id": "ord_1234"
                     *     }
                     */
                    metadata?: {
                        [key: string]: string;
                    };
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        name: string;
                        /**
                         * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                         * @example {
                         *       "order_id": "ord_1234"
                         *     }
                         */
                        metadata: {
                            [key: string]: string;
                        };
                        api_key: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listProviders: {
        parameters: {
            query?: {
                /** @description a whole number from 1 to 100 (default 20) */
                limit?: string;
                /** @description an object id: the page of objects after it (older) */
                starting_after?: string;
                /** @description an object id: the page of objects before it (newer) */
                ending_before?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            name: string;
                            kind: string;
                            webhook_path: string;
                            policies: {
                                [key: string]: unknown;
                            };
                            secrets_count: number;
                            has_api_key: boolean;
                            base_url: string | null;
                            user_id: string | null;
                        }[];
                        /** @description more objects follow in this direction */
                        has_more: boolean;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createProvider: {
        parameters: {
            query?: never;
            header?: {
                /** @description replays the first answer for the same key and body */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description one to 63 lowercase letters, digits, - and _, starting with a letter or digit */
                    name: string;
                    kind: "generic" | "replicate" | "openai" | "fal";
                    /** @description active signing secrets ("whsec_..."); any one verifies */
                    secrets?: string[];
                    jwks?: ({
                        keys: {
                            [key: string]: unknown;
                        }[];
                    } & {
                        [key: string]: unknown;
                    }) | null;
                    api_key?: string | null;
                    base_url?: string | null;
                    user_id?: string | null;
                    policies?: {
                        failed_with_usage?: "release" | "capture";
                        cancel_grace_seconds?: number;
                        hold_ttl_seconds?: number;
                    };
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        name: string;
                        kind: string;
                        webhook_path: string;
                        policies: {
                            [key: string]: unknown;
                        };
                        secrets_count: number;
                        has_api_key: boolean;
                        base_url: string | null;
                        user_id: string | null;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateProvider: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description active signing secrets ("whsec_..."); any one verifies */
                    secrets?: string[];
                    jwks?: ({
                        keys: {
                            [key: string]: unknown;
                        }[];
                    } & {
                        [key: string]: unknown;
                    }) | null;
                    api_key?: string | null;
                    base_url?: string | null;
                    user_id?: string | null;
                    policies?: {
                        failed_with_usage?: "release" | "capture";
                        cancel_grace_seconds?: number;
                        hold_ttl_seconds?: number;
                    };
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        name: string;
                        kind: string;
                        webhook_path: string;
                        policies: {
                            [key: string]: unknown;
                        };
                        secrets_count: number;
                        has_api_key: boolean;
                        base_url: string | null;
                        user_id: string | null;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    publishPrice: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                model: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description a three-letter ISO 4217 code in capitals
                     * @example USD
                     */
                    currency: string;
                    /**
                     * @description price per 1,000,000 units of each usage dimension
                     * @example {
                     *       "input_tokens": "1.00",
                     *       "output_tokens": "2.00"
                     *     }
                     */
                    unit_prices: {
                        [key: string]: string;
                    };
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        model: string;
                        currency: string;
                        version: number;
                        unit_prices: {
                            [key: string]: string;
                        };
                        created_at: string;
                    };
                };
            };
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        model: string;
                        currency: string;
                        version: number;
                        unit_prices: {
                            [key: string]: string;
                        };
                        created_at: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWallets: {
        parameters: {
            query?: {
                /** @description a whole number from 1 to 100 (default 20) */
                limit?: string;
                /** @description an object id: the page of objects after it (older) */
                starting_after?: string;
                /** @description an object id: the page of objects before it (newer) */
                ending_before?: string;
                /**
                 * @description a three-letter ISO 4217 code in capitals
                 * @example USD
                 */
                currency?: string;
                /** @description the admin: only this tenant's objects; a tenant key may name only its own tenant (any other is 403) */
                tenant_id?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            tenant_id: string;
                            currency: string;
                            /**
                             * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                             * @example {
                             *       "order_id": "ord_1234"
                             *     }
                             */
                            metadata: {
                                [key: string]: string;
                            };
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            balance: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            reserved: string;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            available: string;
                            created_at: string;
                            /** @description the grants' remaining by category, held parts included (balance = paid + promotional − debt) */
                            balance_by_category: {
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                paid: string;
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                promotional: string;
                            };
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            debt: string;
                            next_expiry: {
                                /**
                                 * Format: date-time
                                 * @description RFC 3339, UTC, to the microsecond
                                 */
                                at: string;
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                amount: string;
                            } | null;
                        }[];
                        /** @description more objects follow in this direction */
                        has_more: boolean;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createWallet: {
        parameters: {
            query?: never;
            header?: {
                /** @description replays the first answer for the same key and body */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description a three-letter ISO 4217 code in capitals
                     * @example USD
                     */
                    currency: string;
                    /**
                     * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                     * @example {
                     *       "order_id": "ord_1234"
                     *     }
                     */
                    metadata?: {
                        [key: string]: string;
                    };
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        tenant_id: string;
                        currency: string;
                        /**
                         * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                         * @example {
                         *       "order_id": "ord_1234"
                         *     }
                         */
                        metadata: {
                            [key: string]: string;
                        };
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        balance: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        reserved: string;
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        available: string;
                        created_at: string;
                        /** @description the grants' remaining by category, held parts included (balance = paid + promotional − debt) */
                        balance_by_category: {
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            paid: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            promotional: string;
                        };
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        debt: string;
                        next_expiry: {
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC, to the microsecond
                             */
                            at: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            amount: string;
                        } | null;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getWallet: {
        parameters: {
            query?: {
                /** @description an RFC 3339 instant, not in the future: the wallet's balance, reserved and available as of then (entries posted at or before it) */
                at?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        tenant_id: string;
                        currency: string;
                        /**
                         * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                         * @example {
                         *       "order_id": "ord_1234"
                         *     }
                         */
                        metadata: {
                            [key: string]: string;
                        };
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        balance: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        reserved: string;
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        available: string;
                        created_at: string;
                        /** @description RFC 3339 in UTC, to the microsecond */
                        at: string;
                        /** @description how many of the wallet's entries had been posted at that instant (0: none) */
                        sequence: number;
                    } | {
                        id: string;
                        tenant_id: string;
                        currency: string;
                        /**
                         * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                         * @example {
                         *       "order_id": "ord_1234"
                         *     }
                         */
                        metadata: {
                            [key: string]: string;
                        };
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        balance: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        reserved: string;
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        available: string;
                        created_at: string;
                        /** @description the grants' remaining by category, held parts included (balance = paid + promotional − debt) */
                        balance_by_category: {
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            paid: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            promotional: string;
                        };
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        debt: string;
                        next_expiry: {
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC, to the microsecond
                             */
                            at: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            amount: string;
                        } | null;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWalletEntries: {
        parameters: {
            query?: {
                /** @description a whole number from 1 to 100 (default 20) */
                limit?: string;
                /** @description an object id: the page of objects after it (older) */
                starting_after?: string;
                /** @description an object id: the page of objects before it (newer) */
                ending_before?: string;
                /** @description next_cursor of the previous page: the same as starting_after */
                cursor?: string;
                entry_type?: "credit" | "grant" | "reserve" | "capture" | "release_remainder" | "release" | "adjustment" | "debt_repayment" | "grant_expiry" | "grant_void" | "refund" | "refund_reversal" | "dispute_loss";
                /** @description only this job's objects */
                job_id?: string;
                /** @description an RFC 3339 instant: only objects created at or after it */
                created_gte?: string;
                /** @description an RFC 3339 instant: only objects created before it */
                created_lt?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            entry_type: string;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            amount: string;
                            settlement_key: string;
                            job_id: string | null;
                            /** @description the grant it moves; null for the wallet's debt, or an entry from before grants */
                            grant_id: string | null;
                            reference: string | null;
                            /** @description the instant the entry took its place in the wallet's order (RFC 3339, UTC, to the microsecond) */
                            created_at: string;
                            /** @description its number in the wallet's order: 1, 2, 3 … in the order the entries were posted */
                            sequence: number;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            balance_after: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            reserved_after: string;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            available_after: string;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            balance_change: string;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            reserved_change: string;
                            /**
                             * @description the change of balance − reserved (available_after): balance_change − reserved_change, a signed decimal string
                             * @example -0.000150
                             */
                            available_change: string;
                        }[];
                        /** @description more objects follow in this direction */
                        has_more: boolean;
                        /** @description pass as cursor (or starting_after) for the next, older page; null when none is older */
                        next_cursor: string | null;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getWalletStatement: {
        parameters: {
            query: {
                /** @description an RFC 3339 instant: the statement starts here (inclusive) */
                from: string;
                /** @description an RFC 3339 instant after from, not in the future: the statement ends here (exclusive) */
                to: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the statement */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        wallet_id: string;
                        currency: string;
                        /** @description RFC 3339 in UTC, to the microsecond */
                        from: string;
                        /** @description RFC 3339 in UTC, to the microsecond */
                        to: string;
                        opening: {
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            balance: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            reserved: string;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            available: string;
                        };
                        /** @description every entry posted in [from, to), in the wallet's order, each with the holdings after it and what it changed */
                        lines: {
                            id: string;
                            entry_type: string;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            amount: string;
                            settlement_key: string;
                            job_id: string | null;
                            /** @description the grant it moves; null for the wallet's debt, or an entry from before grants */
                            grant_id: string | null;
                            reference: string | null;
                            /** @description the instant the entry took its place in the wallet's order (RFC 3339, UTC, to the microsecond) */
                            created_at: string;
                            /** @description its number in the wallet's order: 1, 2, 3 … in the order the entries were posted */
                            sequence: number;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            balance_after: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            reserved_after: string;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            available_after: string;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            balance_change: string;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            reserved_change: string;
                            /**
                             * @description the change of balance − reserved (available_after): balance_change − reserved_change, a signed decimal string
                             * @example -0.000150
                             */
                            available_change: string;
                        }[];
                        closing: {
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            balance: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            reserved: string;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            available: string;
                        };
                        /** @description per entry type present: how many, their amounts, and what they did to the balance, the reserved amount and balance − reserved */
                        totals: {
                            entry_type: string;
                            count: number;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            amount: string;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            balance_change: string;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            reserved_change: string;
                            /**
                             * @description the change of balance − reserved (available_after): balance_change − reserved_change, a signed decimal string
                             * @example -0.000150
                             */
                            available_change: string;
                        }[];
                        /** @description per category of the grant an entry names, always paid, promotional and unassigned (no grant: the wallet's debt, or an entry from before grants): how many entries, and what they did to the balance, the reserved amount and balance − reserved. A debt repayment counts in its grant's category, moving it down and unassigned up; the categories add up to the same changes as the per-type totals */
                        totals_by_category: {
                            category: "paid" | "promotional" | "unassigned";
                            count: number;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            balance_change: string;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            reserved_change: string;
                            /**
                             * @description the change of balance − reserved (available_after): balance_change − reserved_change, a signed decimal string
                             * @example -0.000150
                             */
                            available_change: string;
                        }[];
                    };
                    "text/csv": string;
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            406: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    creditWallet: {
        parameters: {
            query?: never;
            header: {
                /** @description required: the call is applied once per key; a retry with the same key and body replays the first answer */
                "idempotency-key": string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                     * @example 12.50
                     */
                    amount: string;
                    /** @description e.g. the payment id */
                    reference?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        entry_type: string;
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        amount: string;
                        settlement_key: string;
                        job_id: string | null;
                        /** @description the grant it moves; null for the wallet's debt, or an entry from before grants */
                        grant_id: string | null;
                        reference: string | null;
                        /** @description the instant the entry took its place in the wallet's order (RFC 3339, UTC, to the microsecond) */
                        created_at: string;
                        /** @description its number in the wallet's order: 1, 2, 3 … in the order the entries were posted */
                        sequence: number;
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        balance_after: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        reserved_after: string;
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        available_after: string;
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        balance_change: string;
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        reserved_change: string;
                        /**
                         * @description the change of balance − reserved (available_after): balance_change − reserved_change, a signed decimal string
                         * @example -0.000150
                         */
                        available_change: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWalletGrants: {
        parameters: {
            query?: {
                /** @description a whole number from 1 to 100 (default 20) */
                limit?: string;
                /** @description an object id: the page of objects after it (older) */
                starting_after?: string;
                /** @description an object id: the page of objects before it (newer) */
                ending_before?: string;
                status?: "scheduled" | "active" | "depleted" | "expired" | "voided" | "awaiting_payment" | "disputed" | "canceled";
                category?: "paid" | "promotional";
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            wallet_id: string;
                            category: "paid" | "promotional";
                            /** @description lowest drawn first */
                            priority: number;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            amount: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            remaining: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            held: string;
                            status: "scheduled" | "active" | "depleted" | "expired" | "voided" | "awaiting_payment" | "disputed" | "canceled";
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC, to the microsecond
                             */
                            effective_at: string;
                            expires_at: string | null;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            expired_amount: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            voided_amount: string;
                            source: "credit" | "grant" | "stripe_checkout" | "stripe_payment" | "auto_recharge";
                            payment: {
                                payment_intent: string | null;
                                charge: string | null;
                                checkout_session: string | null;
                                dispute: string | null;
                                /** @description the processor's refund ids (re_…) */
                                refunds: string[];
                            } | null;
                            reference: string | null;
                            /**
                             * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                             * @example {
                             *       "order_id": "ord_1234"
                             *     }
                             */
                            metadata: {
                                [key: string]: string;
                            };
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC, to the microsecond
                             */
                            created_at: string;
                        }[];
                        /** @description more objects follow in this direction */
                        has_more: boolean;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createGrant: {
        parameters: {
            query?: never;
            header: {
                /** @description required: the call is applied once per key; a retry with the same key and body replays the first answer */
                "idempotency-key": string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                     * @example 12.50
                     */
                    amount: string;
                    category: "paid" | "promotional";
                    /** @description lowest drawn first (default 50) */
                    priority?: number;
                    /** @description RFC 3339: when its money enters the wallet (default: now; a past instant is now) */
                    effective_at?: string;
                    /** @description RFC 3339, after effective_at and in the future: when its unheld remaining lapses (default: never) */
                    expires_at?: string;
                    /** @description e.g. the campaign or the order */
                    reference?: string;
                    /**
                     * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                     * @example {
                     *       "order_id": "ord_1234"
                     *     }
                     */
                    metadata?: {
                        [key: string]: string;
                    };
                };
            };
        };
        responses: {
            /** @description a sub-account of a wallet: `remaining` is what it still holds for the wallet, held part included; `held` the part open holds reserve; a scheduled, awaiting or canceled grant holds 0 (`amount` says what it will bring) */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        wallet_id: string;
                        category: "paid" | "promotional";
                        /** @description lowest drawn first */
                        priority: number;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        amount: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        remaining: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        held: string;
                        status: "scheduled" | "active" | "depleted" | "expired" | "voided" | "awaiting_payment" | "disputed" | "canceled";
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC, to the microsecond
                         */
                        effective_at: string;
                        expires_at: string | null;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        expired_amount: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        voided_amount: string;
                        source: "credit" | "grant" | "stripe_checkout" | "stripe_payment" | "auto_recharge";
                        payment: {
                            payment_intent: string | null;
                            charge: string | null;
                            checkout_session: string | null;
                            dispute: string | null;
                            /** @description the processor's refund ids (re_…) */
                            refunds: string[];
                        } | null;
                        reference: string | null;
                        /**
                         * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                         * @example {
                         *       "order_id": "ord_1234"
                         *     }
                         */
                        metadata: {
                            [key: string]: string;
                        };
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC, to the microsecond
                         */
                        created_at: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getGrant: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description a sub-account of a wallet: `remaining` is what it still holds for the wallet, held part included; `held` the part open holds reserve; a scheduled, awaiting or canceled grant holds 0 (`amount` says what it will bring) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        wallet_id: string;
                        category: "paid" | "promotional";
                        /** @description lowest drawn first */
                        priority: number;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        amount: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        remaining: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        held: string;
                        status: "scheduled" | "active" | "depleted" | "expired" | "voided" | "awaiting_payment" | "disputed" | "canceled";
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC, to the microsecond
                         */
                        effective_at: string;
                        expires_at: string | null;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        expired_amount: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        voided_amount: string;
                        source: "credit" | "grant" | "stripe_checkout" | "stripe_payment" | "auto_recharge";
                        payment: {
                            payment_intent: string | null;
                            charge: string | null;
                            checkout_session: string | null;
                            dispute: string | null;
                            /** @description the processor's refund ids (re_…) */
                            refunds: string[];
                        } | null;
                        reference: string | null;
                        /**
                         * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                         * @example {
                         *       "order_id": "ord_1234"
                         *     }
                         */
                        metadata: {
                            [key: string]: string;
                        };
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC, to the microsecond
                         */
                        created_at: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    voidGrant: {
        parameters: {
            query?: never;
            header?: {
                /** @description replays the first answer for the same key and body */
                "idempotency-key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description why: kept with the grant and on its grant_void entry */
                    note: string;
                };
            };
        };
        responses: {
            /** @description a sub-account of a wallet: `remaining` is what it still holds for the wallet, held part included; `held` the part open holds reserve; a scheduled, awaiting or canceled grant holds 0 (`amount` says what it will bring) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        wallet_id: string;
                        category: "paid" | "promotional";
                        /** @description lowest drawn first */
                        priority: number;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        amount: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        remaining: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        held: string;
                        status: "scheduled" | "active" | "depleted" | "expired" | "voided" | "awaiting_payment" | "disputed" | "canceled";
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC, to the microsecond
                         */
                        effective_at: string;
                        expires_at: string | null;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        expired_amount: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        voided_amount: string;
                        source: "credit" | "grant" | "stripe_checkout" | "stripe_payment" | "auto_recharge";
                        payment: {
                            payment_intent: string | null;
                            charge: string | null;
                            checkout_session: string | null;
                            dispute: string | null;
                            /** @description the processor's refund ids (re_…) */
                            refunds: string[];
                        } | null;
                        reference: string | null;
                        /**
                         * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                         * @example {
                         *       "order_id": "ord_1234"
                         *     }
                         */
                        metadata: {
                            [key: string]: string;
                        };
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC, to the microsecond
                         */
                        created_at: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listJobs: {
        parameters: {
            query?: {
                /** @description a whole number from 1 to 100 (default 20) */
                limit?: string;
                /** @description an object id: the page of objects after it (older) */
                starting_after?: string;
                /** @description an object id: the page of objects before it (newer) */
                ending_before?: string;
                state?: "reserved" | "running" | "cancel_requested" | "usage_pending" | "captured" | "released";
                /** @description a model name, exactly */
                model?: string;
                /** @description a provider name, exactly */
                provider?: string;
                /** @description only this wallet's jobs */
                wallet_id?: string;
                /** @description an RFC 3339 instant: only objects created at or after it */
                created_gte?: string;
                /** @description an RFC 3339 instant: only objects created before it */
                created_lt?: string;
                /** @description the admin: only this tenant's objects; a tenant key may name only its own tenant (any other is 403) */
                tenant_id?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            state: "reserved" | "running" | "cancel_requested" | "usage_pending" | "captured" | "released";
                            wallet_id: string;
                            provider: string;
                            provider_job_ref: string | null;
                            model: string;
                            currency: string;
                            /**
                             * @description usage per dimension: non-negative safe integers
                             * @example {
                             *       "input_tokens": 1200,
                             *       "output_tokens": 340
                             *     }
                             */
                            limits: {
                                [key: string]: number;
                            };
                            /**
                             * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                             * @example {
                             *       "order_id": "ord_1234"
                             *     }
                             */
                            metadata: {
                                [key: string]: string;
                            };
                            price_version: number;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            reserved: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            captured: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            released: string;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            adjusted: string;
                            cancel_requested_at: string | null;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            hold_expires_at: string;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                            auto_extend: {
                                /**
                                 * @description usage per dimension: non-negative safe integers
                                 * @example {
                                 *       "input_tokens": 1200,
                                 *       "output_tokens": 340
                                 *     }
                                 */
                                step: {
                                    [key: string]: number;
                                };
                                /**
                                 * @description usage per dimension: non-negative safe integers
                                 * @example {
                                 *       "input_tokens": 1200,
                                 *       "output_tokens": 340
                                 *     }
                                 */
                                max_limits: {
                                    [key: string]: number;
                                };
                            } | null;
                            usage_so_far: {
                                [key: string]: number;
                            } | null;
                            hold_exhausted: {
                                reason: ("max_limits" | "insufficient_funds" | "spend_limit") | null;
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                reserved: string;
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                usage_price: string;
                                /**
                                 * Format: date-time
                                 * @description RFC 3339, UTC
                                 */
                                at: string;
                            } | null;
                            tenant_id: string;
                        }[];
                        /** @description more objects follow in this direction */
                        has_more: boolean;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    submitJob: {
        parameters: {
            query?: never;
            header: {
                /** @description required: the call is applied once per key; a retry with the same key and body replays the first answer */
                "idempotency-key": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    wallet_id: string;
                    model: string;
                    provider: string;
                    provider_job_ref?: string;
                    /**
                     * @description usage per dimension: non-negative safe integers
                     * @example {
                     *       "input_tokens": 1200,
                     *       "output_tokens": 340
                     *     }
                     */
                    limits: {
                        [key: string]: number;
                    };
                    /**
                     * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                     * @example {
                     *       "order_id": "ord_1234"
                     *     }
                     */
                    metadata?: {
                        [key: string]: string;
                    };
                    /** @description grow the hold by itself while the job runs (docs/long-running-jobs.md): whole `step`s per dimension as progress reports' usage nears the limits, never beyond `max_limits`; checked against the pinned price (422 invalid_limits) */
                    auto_extend?: {
                        /**
                         * @example {
                         *       "gpu_seconds": 300
                         *     }
                         */
                        step: {
                            [key: string]: number;
                        };
                        /**
                         * @example {
                         *       "gpu_seconds": 3600
                         *     }
                         */
                        max_limits: {
                            [key: string]: number;
                        };
                    };
                };
            };
        };
        responses: {
            /** @description a job as submitted: its reservation at the pinned price version */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        state: "reserved" | "running" | "cancel_requested" | "usage_pending" | "captured" | "released";
                        wallet_id: string;
                        provider: string;
                        provider_job_ref: string | null;
                        model: string;
                        currency: string;
                        /**
                         * @description usage per dimension: non-negative safe integers
                         * @example {
                         *       "input_tokens": 1200,
                         *       "output_tokens": 340
                         *     }
                         */
                        limits: {
                            [key: string]: number;
                        };
                        /**
                         * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                         * @example {
                         *       "order_id": "ord_1234"
                         *     }
                         */
                        metadata: {
                            [key: string]: string;
                        };
                        price_version: number;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        reserved: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        captured: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        released: string;
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        adjusted: string;
                        cancel_requested_at: string | null;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        hold_expires_at: string;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        created_at: string;
                        auto_extend: {
                            /**
                             * @description usage per dimension: non-negative safe integers
                             * @example {
                             *       "input_tokens": 1200,
                             *       "output_tokens": 340
                             *     }
                             */
                            step: {
                                [key: string]: number;
                            };
                            /**
                             * @description usage per dimension: non-negative safe integers
                             * @example {
                             *       "input_tokens": 1200,
                             *       "output_tokens": 340
                             *     }
                             */
                            max_limits: {
                                [key: string]: number;
                            };
                        } | null;
                        usage_so_far: {
                            [key: string]: number;
                        } | null;
                        hold_exhausted: {
                            reason: ("max_limits" | "insufficient_funds" | "spend_limit") | null;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            reserved: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            usage_price: string;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            at: string;
                        } | null;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getJob: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description a job with its settlements (each with its pricing snapshot), its provider events and its alerts */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        state: "reserved" | "running" | "cancel_requested" | "usage_pending" | "captured" | "released";
                        wallet_id: string;
                        provider: string;
                        provider_job_ref: string | null;
                        model: string;
                        currency: string;
                        /**
                         * @description usage per dimension: non-negative safe integers
                         * @example {
                         *       "input_tokens": 1200,
                         *       "output_tokens": 340
                         *     }
                         */
                        limits: {
                            [key: string]: number;
                        };
                        /**
                         * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                         * @example {
                         *       "order_id": "ord_1234"
                         *     }
                         */
                        metadata: {
                            [key: string]: string;
                        };
                        price_version: number;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        reserved: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        captured: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        released: string;
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        adjusted: string;
                        cancel_requested_at: string | null;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        hold_expires_at: string;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        created_at: string;
                        auto_extend: {
                            /**
                             * @description usage per dimension: non-negative safe integers
                             * @example {
                             *       "input_tokens": 1200,
                             *       "output_tokens": 340
                             *     }
                             */
                            step: {
                                [key: string]: number;
                            };
                            /**
                             * @description usage per dimension: non-negative safe integers
                             * @example {
                             *       "input_tokens": 1200,
                             *       "output_tokens": 340
                             *     }
                             */
                            max_limits: {
                                [key: string]: number;
                            };
                        } | null;
                        usage_so_far: {
                            [key: string]: number;
                        } | null;
                        hold_exhausted: {
                            reason: ("max_limits" | "insufficient_funds" | "spend_limit") | null;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            reserved: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            usage_price: string;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            at: string;
                        } | null;
                        settlements: {
                            /** @description the settlement key: tenant, job, phase (and version for adjustments) */
                            key: string;
                            charge_type: "capture" | "release" | "adjustment";
                            version: number;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            amount: string;
                            /** @enum {string} */
                            status: "posted";
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            released_remainder?: string;
                            reason?: string;
                            /** @description everything that made the amount: usage, the pinned price version, each line, the cap */
                            pricing?: {
                                /**
                                 * @description usage per dimension: non-negative safe integers
                                 * @example {
                                 *       "input_tokens": 1200,
                                 *       "output_tokens": 340
                                 *     }
                                 */
                                usage: {
                                    [key: string]: number;
                                };
                                priceBookId: string;
                                model: string;
                                currency: string;
                                priceVersion: number;
                                unitPrices: {
                                    [key: string]: string;
                                };
                                /** @example per_dimension_half_up_micro */
                                rounding: string;
                                lines: {
                                    dimension: string;
                                    units: number;
                                    /**
                                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                     * @example 12.50
                                     */
                                    unitPrice: string;
                                    /**
                                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                     * @example 12.50
                                     */
                                    amount: string;
                                }[];
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                price: string;
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                billable: string;
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                cap?: string;
                            };
                        }[];
                        events: {
                            event_key: string;
                            provider: string;
                            /** @example job.completed */
                            type: string;
                            state: "pending" | "processing" | "applied" | "no_effect" | "stale" | "dead" | "discarded";
                            reason: string | null;
                            attempts: number;
                            error_code: ("usage_fetch_failed" | "settlement_failed") | null;
                            last_error?: string | null;
                            discarded_by?: string | null;
                            discarded_at?: string | null;
                            discard_note?: string | null;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            received_at: string;
                            processed_at: string | null;
                        }[];
                        /** @description the classes of the alerts raised for this job */
                        alerts: string[];
                        /** @description each alert raised for this job, oldest first, with the amounts it saw */
                        alert_details: {
                            class: string;
                            /** @description what raised it: a settlement key, or provider/event_key */
                            source: string;
                            /** @description what was seen, per class (as GET /v1/alerts shows it) */
                            detail: {
                                [key: string]: unknown;
                            };
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                        }[];
                        /** @description every webhook delivery that named this job, duplicates included, oldest first */
                        deliveries: {
                            provider: string;
                            event_key: string;
                            outcome: "accepted" | "already_accepted" | "event_key_conflict" | "event_mismatch";
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            received_at: string;
                        }[];
                        /** @description the job's money per grant: the hold's shares in allocation order (the order captures consume them), then the grants only adjustments reached. Per row: once the hold is resolved, held = captured + returned; the job's cost on the grant = captured + adjusted; `refunded` is what refunds gave back of the captured part (already counted in `adjusted`) */
                        funding: {
                            grant_id: string;
                            category: "paid" | "promotional";
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            held: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            captured: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            returned: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            refunded: string;
                            /**
                             * @description signed: what the job's positive adjustments drew from this grant, less what its refunds gave back (of those draws and of `captured`)
                             * @example -0.000150
                             */
                            adjusted: string;
                        }[];
                        /** @description the hold's extensions, oldest first: reserved = the first hold + Σ amount */
                        extensions: {
                            version: number;
                            /** @description {tenant}:{job}:extension:{N} */
                            settlement_key: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            amount: string;
                            /** @description the job's limits after this extension */
                            limits: {
                                [key: string]: number;
                            };
                            source: "api" | "auto";
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                        }[];
                        /**
                         * @description the part of the job's adjustments no grant covered (the wallet's debt), net of refunds: Σ funding (captured + adjusted) + funding_debt = captured + adjusted
                         * @example 12.50
                         */
                        funding_debt: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateJob: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    provider_job_ref: string;
                };
            };
        };
        responses: {
            /** @description a job with its settlements (each with its pricing snapshot), its provider events and its alerts */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        state: "reserved" | "running" | "cancel_requested" | "usage_pending" | "captured" | "released";
                        wallet_id: string;
                        provider: string;
                        provider_job_ref: string | null;
                        model: string;
                        currency: string;
                        /**
                         * @description usage per dimension: non-negative safe integers
                         * @example {
                         *       "input_tokens": 1200,
                         *       "output_tokens": 340
                         *     }
                         */
                        limits: {
                            [key: string]: number;
                        };
                        /**
                         * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                         * @example {
                         *       "order_id": "ord_1234"
                         *     }
                         */
                        metadata: {
                            [key: string]: string;
                        };
                        price_version: number;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        reserved: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        captured: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        released: string;
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        adjusted: string;
                        cancel_requested_at: string | null;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        hold_expires_at: string;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        created_at: string;
                        auto_extend: {
                            /**
                             * @description usage per dimension: non-negative safe integers
                             * @example {
                             *       "input_tokens": 1200,
                             *       "output_tokens": 340
                             *     }
                             */
                            step: {
                                [key: string]: number;
                            };
                            /**
                             * @description usage per dimension: non-negative safe integers
                             * @example {
                             *       "input_tokens": 1200,
                             *       "output_tokens": 340
                             *     }
                             */
                            max_limits: {
                                [key: string]: number;
                            };
                        } | null;
                        usage_so_far: {
                            [key: string]: number;
                        } | null;
                        hold_exhausted: {
                            reason: ("max_limits" | "insufficient_funds" | "spend_limit") | null;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            reserved: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            usage_price: string;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            at: string;
                        } | null;
                        settlements: {
                            /** @description the settlement key: tenant, job, phase (and version for adjustments) */
                            key: string;
                            charge_type: "capture" | "release" | "adjustment";
                            version: number;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            amount: string;
                            /** @enum {string} */
                            status: "posted";
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            released_remainder?: string;
                            reason?: string;
                            /** @description everything that made the amount: usage, the pinned price version, each line, the cap */
                            pricing?: {
                                /**
                                 * @description usage per dimension: non-negative safe integers
                                 * @example {
                                 *       "input_tokens": 1200,
                                 *       "output_tokens": 340
                                 *     }
                                 */
                                usage: {
                                    [key: string]: number;
                                };
                                priceBookId: string;
                                model: string;
                                currency: string;
                                priceVersion: number;
                                unitPrices: {
                                    [key: string]: string;
                                };
                                /** @example per_dimension_half_up_micro */
                                rounding: string;
                                lines: {
                                    dimension: string;
                                    units: number;
                                    /**
                                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                     * @example 12.50
                                     */
                                    unitPrice: string;
                                    /**
                                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                     * @example 12.50
                                     */
                                    amount: string;
                                }[];
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                price: string;
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                billable: string;
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                cap?: string;
                            };
                        }[];
                        events: {
                            event_key: string;
                            provider: string;
                            /** @example job.completed */
                            type: string;
                            state: "pending" | "processing" | "applied" | "no_effect" | "stale" | "dead" | "discarded";
                            reason: string | null;
                            attempts: number;
                            error_code: ("usage_fetch_failed" | "settlement_failed") | null;
                            last_error?: string | null;
                            discarded_by?: string | null;
                            discarded_at?: string | null;
                            discard_note?: string | null;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            received_at: string;
                            processed_at: string | null;
                        }[];
                        /** @description the classes of the alerts raised for this job */
                        alerts: string[];
                        /** @description each alert raised for this job, oldest first, with the amounts it saw */
                        alert_details: {
                            class: string;
                            /** @description what raised it: a settlement key, or provider/event_key */
                            source: string;
                            /** @description what was seen, per class (as GET /v1/alerts shows it) */
                            detail: {
                                [key: string]: unknown;
                            };
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                        }[];
                        /** @description every webhook delivery that named this job, duplicates included, oldest first */
                        deliveries: {
                            provider: string;
                            event_key: string;
                            outcome: "accepted" | "already_accepted" | "event_key_conflict" | "event_mismatch";
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            received_at: string;
                        }[];
                        /** @description the job's money per grant: the hold's shares in allocation order (the order captures consume them), then the grants only adjustments reached. Per row: once the hold is resolved, held = captured + returned; the job's cost on the grant = captured + adjusted; `refunded` is what refunds gave back of the captured part (already counted in `adjusted`) */
                        funding: {
                            grant_id: string;
                            category: "paid" | "promotional";
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            held: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            captured: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            returned: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            refunded: string;
                            /**
                             * @description signed: what the job's positive adjustments drew from this grant, less what its refunds gave back (of those draws and of `captured`)
                             * @example -0.000150
                             */
                            adjusted: string;
                        }[];
                        /** @description the hold's extensions, oldest first: reserved = the first hold + Σ amount */
                        extensions: {
                            version: number;
                            /** @description {tenant}:{job}:extension:{N} */
                            settlement_key: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            amount: string;
                            /** @description the job's limits after this extension */
                            limits: {
                                [key: string]: number;
                            };
                            source: "api" | "auto";
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                        }[];
                        /**
                         * @description the part of the job's adjustments no grant covered (the wallet's debt), net of refunds: Σ funding (captured + adjusted) + funding_debt = captured + adjusted
                         * @example 12.50
                         */
                        funding_debt: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    extendJob: {
        parameters: {
            query?: never;
            header: {
                /** @description required: the call is applied once per key; a retry with the same key and body replays the first answer */
                "idempotency-key": string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description units to add to the job's limits, per dimension: positive integers, dimensions the pinned price bills (checked against the pinned price: 422 invalid_limits otherwise)
                     * @example {
                     *       "gpu_seconds": 600
                     *     }
                     */
                    add: {
                        [key: string]: unknown;
                    };
                };
            };
        };
        responses: {
            /** @description a job with its settlements (each with its pricing snapshot), its provider events and its alerts */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        state: "reserved" | "running" | "cancel_requested" | "usage_pending" | "captured" | "released";
                        wallet_id: string;
                        provider: string;
                        provider_job_ref: string | null;
                        model: string;
                        currency: string;
                        /**
                         * @description usage per dimension: non-negative safe integers
                         * @example {
                         *       "input_tokens": 1200,
                         *       "output_tokens": 340
                         *     }
                         */
                        limits: {
                            [key: string]: number;
                        };
                        /**
                         * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                         * @example {
                         *       "order_id": "ord_1234"
                         *     }
                         */
                        metadata: {
                            [key: string]: string;
                        };
                        price_version: number;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        reserved: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        captured: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        released: string;
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        adjusted: string;
                        cancel_requested_at: string | null;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        hold_expires_at: string;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        created_at: string;
                        auto_extend: {
                            /**
                             * @description usage per dimension: non-negative safe integers
                             * @example {
                             *       "input_tokens": 1200,
                             *       "output_tokens": 340
                             *     }
                             */
                            step: {
                                [key: string]: number;
                            };
                            /**
                             * @description usage per dimension: non-negative safe integers
                             * @example {
                             *       "input_tokens": 1200,
                             *       "output_tokens": 340
                             *     }
                             */
                            max_limits: {
                                [key: string]: number;
                            };
                        } | null;
                        usage_so_far: {
                            [key: string]: number;
                        } | null;
                        hold_exhausted: {
                            reason: ("max_limits" | "insufficient_funds" | "spend_limit") | null;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            reserved: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            usage_price: string;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            at: string;
                        } | null;
                        settlements: {
                            /** @description the settlement key: tenant, job, phase (and version for adjustments) */
                            key: string;
                            charge_type: "capture" | "release" | "adjustment";
                            version: number;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            amount: string;
                            /** @enum {string} */
                            status: "posted";
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            released_remainder?: string;
                            reason?: string;
                            /** @description everything that made the amount: usage, the pinned price version, each line, the cap */
                            pricing?: {
                                /**
                                 * @description usage per dimension: non-negative safe integers
                                 * @example {
                                 *       "input_tokens": 1200,
                                 *       "output_tokens": 340
                                 *     }
                                 */
                                usage: {
                                    [key: string]: number;
                                };
                                priceBookId: string;
                                model: string;
                                currency: string;
                                priceVersion: number;
                                unitPrices: {
                                    [key: string]: string;
                                };
                                /** @example per_dimension_half_up_micro */
                                rounding: string;
                                lines: {
                                    dimension: string;
                                    units: number;
                                    /**
                                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                     * @example 12.50
                                     */
                                    unitPrice: string;
                                    /**
                                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                     * @example 12.50
                                     */
                                    amount: string;
                                }[];
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                price: string;
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                billable: string;
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                cap?: string;
                            };
                        }[];
                        events: {
                            event_key: string;
                            provider: string;
                            /** @example job.completed */
                            type: string;
                            state: "pending" | "processing" | "applied" | "no_effect" | "stale" | "dead" | "discarded";
                            reason: string | null;
                            attempts: number;
                            error_code: ("usage_fetch_failed" | "settlement_failed") | null;
                            last_error?: string | null;
                            discarded_by?: string | null;
                            discarded_at?: string | null;
                            discard_note?: string | null;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            received_at: string;
                            processed_at: string | null;
                        }[];
                        /** @description the classes of the alerts raised for this job */
                        alerts: string[];
                        /** @description each alert raised for this job, oldest first, with the amounts it saw */
                        alert_details: {
                            class: string;
                            /** @description what raised it: a settlement key, or provider/event_key */
                            source: string;
                            /** @description what was seen, per class (as GET /v1/alerts shows it) */
                            detail: {
                                [key: string]: unknown;
                            };
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                        }[];
                        /** @description every webhook delivery that named this job, duplicates included, oldest first */
                        deliveries: {
                            provider: string;
                            event_key: string;
                            outcome: "accepted" | "already_accepted" | "event_key_conflict" | "event_mismatch";
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            received_at: string;
                        }[];
                        /** @description the job's money per grant: the hold's shares in allocation order (the order captures consume them), then the grants only adjustments reached. Per row: once the hold is resolved, held = captured + returned; the job's cost on the grant = captured + adjusted; `refunded` is what refunds gave back of the captured part (already counted in `adjusted`) */
                        funding: {
                            grant_id: string;
                            category: "paid" | "promotional";
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            held: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            captured: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            returned: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            refunded: string;
                            /**
                             * @description signed: what the job's positive adjustments drew from this grant, less what its refunds gave back (of those draws and of `captured`)
                             * @example -0.000150
                             */
                            adjusted: string;
                        }[];
                        /** @description the hold's extensions, oldest first: reserved = the first hold + Σ amount */
                        extensions: {
                            version: number;
                            /** @description {tenant}:{job}:extension:{N} */
                            settlement_key: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            amount: string;
                            /** @description the job's limits after this extension */
                            limits: {
                                [key: string]: number;
                            };
                            source: "api" | "auto";
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                        }[];
                        /**
                         * @description the part of the job's adjustments no grant covered (the wallet's debt), net of refunds: Σ funding (captured + adjusted) + funding_debt = captured + adjusted
                         * @example 12.50
                         */
                        funding_debt: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    cancelJob: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description a job with its settlements (each with its pricing snapshot), its provider events and its alerts */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        state: "reserved" | "running" | "cancel_requested" | "usage_pending" | "captured" | "released";
                        wallet_id: string;
                        provider: string;
                        provider_job_ref: string | null;
                        model: string;
                        currency: string;
                        /**
                         * @description usage per dimension: non-negative safe integers
                         * @example {
                         *       "input_tokens": 1200,
                         *       "output_tokens": 340
                         *     }
                         */
                        limits: {
                            [key: string]: number;
                        };
                        /**
                         * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                         * @example {
                         *       "order_id": "ord_1234"
                         *     }
                         */
                        metadata: {
                            [key: string]: string;
                        };
                        price_version: number;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        reserved: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        captured: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        released: string;
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        adjusted: string;
                        cancel_requested_at: string | null;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        hold_expires_at: string;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        created_at: string;
                        auto_extend: {
                            /**
                             * @description usage per dimension: non-negative safe integers
                             * @example {
                             *       "input_tokens": 1200,
                             *       "output_tokens": 340
                             *     }
                             */
                            step: {
                                [key: string]: number;
                            };
                            /**
                             * @description usage per dimension: non-negative safe integers
                             * @example {
                             *       "input_tokens": 1200,
                             *       "output_tokens": 340
                             *     }
                             */
                            max_limits: {
                                [key: string]: number;
                            };
                        } | null;
                        usage_so_far: {
                            [key: string]: number;
                        } | null;
                        hold_exhausted: {
                            reason: ("max_limits" | "insufficient_funds" | "spend_limit") | null;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            reserved: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            usage_price: string;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            at: string;
                        } | null;
                        settlements: {
                            /** @description the settlement key: tenant, job, phase (and version for adjustments) */
                            key: string;
                            charge_type: "capture" | "release" | "adjustment";
                            version: number;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            amount: string;
                            /** @enum {string} */
                            status: "posted";
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            released_remainder?: string;
                            reason?: string;
                            /** @description everything that made the amount: usage, the pinned price version, each line, the cap */
                            pricing?: {
                                /**
                                 * @description usage per dimension: non-negative safe integers
                                 * @example {
                                 *       "input_tokens": 1200,
                                 *       "output_tokens": 340
                                 *     }
                                 */
                                usage: {
                                    [key: string]: number;
                                };
                                priceBookId: string;
                                model: string;
                                currency: string;
                                priceVersion: number;
                                unitPrices: {
                                    [key: string]: string;
                                };
                                /** @example per_dimension_half_up_micro */
                                rounding: string;
                                lines: {
                                    dimension: string;
                                    units: number;
                                    /**
                                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                     * @example 12.50
                                     */
                                    unitPrice: string;
                                    /**
                                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                     * @example 12.50
                                     */
                                    amount: string;
                                }[];
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                price: string;
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                billable: string;
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                cap?: string;
                            };
                        }[];
                        events: {
                            event_key: string;
                            provider: string;
                            /** @example job.completed */
                            type: string;
                            state: "pending" | "processing" | "applied" | "no_effect" | "stale" | "dead" | "discarded";
                            reason: string | null;
                            attempts: number;
                            error_code: ("usage_fetch_failed" | "settlement_failed") | null;
                            last_error?: string | null;
                            discarded_by?: string | null;
                            discarded_at?: string | null;
                            discard_note?: string | null;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            received_at: string;
                            processed_at: string | null;
                        }[];
                        /** @description the classes of the alerts raised for this job */
                        alerts: string[];
                        /** @description each alert raised for this job, oldest first, with the amounts it saw */
                        alert_details: {
                            class: string;
                            /** @description what raised it: a settlement key, or provider/event_key */
                            source: string;
                            /** @description what was seen, per class (as GET /v1/alerts shows it) */
                            detail: {
                                [key: string]: unknown;
                            };
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                        }[];
                        /** @description every webhook delivery that named this job, duplicates included, oldest first */
                        deliveries: {
                            provider: string;
                            event_key: string;
                            outcome: "accepted" | "already_accepted" | "event_key_conflict" | "event_mismatch";
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            received_at: string;
                        }[];
                        /** @description the job's money per grant: the hold's shares in allocation order (the order captures consume them), then the grants only adjustments reached. Per row: once the hold is resolved, held = captured + returned; the job's cost on the grant = captured + adjusted; `refunded` is what refunds gave back of the captured part (already counted in `adjusted`) */
                        funding: {
                            grant_id: string;
                            category: "paid" | "promotional";
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            held: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            captured: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            returned: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            refunded: string;
                            /**
                             * @description signed: what the job's positive adjustments drew from this grant, less what its refunds gave back (of those draws and of `captured`)
                             * @example -0.000150
                             */
                            adjusted: string;
                        }[];
                        /** @description the hold's extensions, oldest first: reserved = the first hold + Σ amount */
                        extensions: {
                            version: number;
                            /** @description {tenant}:{job}:extension:{N} */
                            settlement_key: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            amount: string;
                            /** @description the job's limits after this extension */
                            limits: {
                                [key: string]: number;
                            };
                            source: "api" | "auto";
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                        }[];
                        /**
                         * @description the part of the job's adjustments no grant covered (the wallet's debt), net of refunds: Σ funding (captured + adjusted) + funding_debt = captured + adjusted
                         * @example 12.50
                         */
                        funding_debt: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    adjustJob: {
        parameters: {
            query?: never;
            header: {
                /** @description required: the call is applied once per key; a retry with the same key and body replays the first answer */
                "idempotency-key": string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description usage per dimension: non-negative safe integers
                     * @example {
                     *       "input_tokens": 1200,
                     *       "output_tokens": 340
                     *     }
                     */
                    usage: {
                        [key: string]: number;
                    };
                    /** @description why: kept on the settlement (`reason`: "operator: …") and on the exception it resolves */
                    reason: string;
                    /** @description a reconciliation exception this adjustment settles: resolved in the same transaction */
                    exception_id?: string;
                };
            };
        };
        responses: {
            /** @description a job with its settlements (each with its pricing snapshot), its provider events and its alerts */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        state: "reserved" | "running" | "cancel_requested" | "usage_pending" | "captured" | "released";
                        wallet_id: string;
                        provider: string;
                        provider_job_ref: string | null;
                        model: string;
                        currency: string;
                        /**
                         * @description usage per dimension: non-negative safe integers
                         * @example {
                         *       "input_tokens": 1200,
                         *       "output_tokens": 340
                         *     }
                         */
                        limits: {
                            [key: string]: number;
                        };
                        /**
                         * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                         * @example {
                         *       "order_id": "ord_1234"
                         *     }
                         */
                        metadata: {
                            [key: string]: string;
                        };
                        price_version: number;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        reserved: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        captured: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        released: string;
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        adjusted: string;
                        cancel_requested_at: string | null;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        hold_expires_at: string;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        created_at: string;
                        auto_extend: {
                            /**
                             * @description usage per dimension: non-negative safe integers
                             * @example {
                             *       "input_tokens": 1200,
                             *       "output_tokens": 340
                             *     }
                             */
                            step: {
                                [key: string]: number;
                            };
                            /**
                             * @description usage per dimension: non-negative safe integers
                             * @example {
                             *       "input_tokens": 1200,
                             *       "output_tokens": 340
                             *     }
                             */
                            max_limits: {
                                [key: string]: number;
                            };
                        } | null;
                        usage_so_far: {
                            [key: string]: number;
                        } | null;
                        hold_exhausted: {
                            reason: ("max_limits" | "insufficient_funds" | "spend_limit") | null;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            reserved: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            usage_price: string;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            at: string;
                        } | null;
                        settlements: {
                            /** @description the settlement key: tenant, job, phase (and version for adjustments) */
                            key: string;
                            charge_type: "capture" | "release" | "adjustment";
                            version: number;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            amount: string;
                            /** @enum {string} */
                            status: "posted";
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            released_remainder?: string;
                            reason?: string;
                            /** @description everything that made the amount: usage, the pinned price version, each line, the cap */
                            pricing?: {
                                /**
                                 * @description usage per dimension: non-negative safe integers
                                 * @example {
                                 *       "input_tokens": 1200,
                                 *       "output_tokens": 340
                                 *     }
                                 */
                                usage: {
                                    [key: string]: number;
                                };
                                priceBookId: string;
                                model: string;
                                currency: string;
                                priceVersion: number;
                                unitPrices: {
                                    [key: string]: string;
                                };
                                /** @example per_dimension_half_up_micro */
                                rounding: string;
                                lines: {
                                    dimension: string;
                                    units: number;
                                    /**
                                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                     * @example 12.50
                                     */
                                    unitPrice: string;
                                    /**
                                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                     * @example 12.50
                                     */
                                    amount: string;
                                }[];
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                price: string;
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                billable: string;
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                cap?: string;
                            };
                        }[];
                        events: {
                            event_key: string;
                            provider: string;
                            /** @example job.completed */
                            type: string;
                            state: "pending" | "processing" | "applied" | "no_effect" | "stale" | "dead" | "discarded";
                            reason: string | null;
                            attempts: number;
                            error_code: ("usage_fetch_failed" | "settlement_failed") | null;
                            last_error?: string | null;
                            discarded_by?: string | null;
                            discarded_at?: string | null;
                            discard_note?: string | null;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            received_at: string;
                            processed_at: string | null;
                        }[];
                        /** @description the classes of the alerts raised for this job */
                        alerts: string[];
                        /** @description each alert raised for this job, oldest first, with the amounts it saw */
                        alert_details: {
                            class: string;
                            /** @description what raised it: a settlement key, or provider/event_key */
                            source: string;
                            /** @description what was seen, per class (as GET /v1/alerts shows it) */
                            detail: {
                                [key: string]: unknown;
                            };
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                        }[];
                        /** @description every webhook delivery that named this job, duplicates included, oldest first */
                        deliveries: {
                            provider: string;
                            event_key: string;
                            outcome: "accepted" | "already_accepted" | "event_key_conflict" | "event_mismatch";
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            received_at: string;
                        }[];
                        /** @description the job's money per grant: the hold's shares in allocation order (the order captures consume them), then the grants only adjustments reached. Per row: once the hold is resolved, held = captured + returned; the job's cost on the grant = captured + adjusted; `refunded` is what refunds gave back of the captured part (already counted in `adjusted`) */
                        funding: {
                            grant_id: string;
                            category: "paid" | "promotional";
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            held: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            captured: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            returned: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            refunded: string;
                            /**
                             * @description signed: what the job's positive adjustments drew from this grant, less what its refunds gave back (of those draws and of `captured`)
                             * @example -0.000150
                             */
                            adjusted: string;
                        }[];
                        /** @description the hold's extensions, oldest first: reserved = the first hold + Σ amount */
                        extensions: {
                            version: number;
                            /** @description {tenant}:{job}:extension:{N} */
                            settlement_key: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            amount: string;
                            /** @description the job's limits after this extension */
                            limits: {
                                [key: string]: number;
                            };
                            source: "api" | "auto";
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                        }[];
                        /**
                         * @description the part of the job's adjustments no grant covered (the wallet's debt), net of refunds: Σ funding (captured + adjusted) + funding_debt = captured + adjusted
                         * @example 12.50
                         */
                        funding_debt: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Prometheus text exposition format */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    retryEvent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                provider: string;
                event_key: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        provider: string;
                        event_key: string;
                        state: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    discardEvent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                provider: string;
                event_key: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    note: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        provider: string;
                        event_key: string;
                        job_id: string;
                        /** @enum {string} */
                        state: "discarded";
                        discarded_by: string;
                        discarded_at: string;
                        discard_note: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    runReconciliation: {
        parameters: {
            query?: never;
            header?: {
                /** @description replays the first answer for the same key and body */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    repair?: boolean;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        clean: boolean;
                        repair: boolean;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        started_at: string;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        finished_at: string;
                        /** @description open exceptions this run found */
                        exceptions: {
                            id: string;
                            /** @example terminal_job_without_settlement */
                            class: string;
                            /** @description the ids the exception is about (job_id, wallet_id, …) */
                            objects: {
                                [key: string]: unknown;
                            };
                            /** @description what was found, per class */
                            detail: {
                                [key: string]: unknown;
                            };
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            first_seen_at: string;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            last_seen_at: string;
                            resolved: boolean;
                            resolution_note: string | null;
                        }[];
                        /** @description found again, but already resolved by an operator */
                        resolved_exceptions: {
                            id: string;
                            /** @example terminal_job_without_settlement */
                            class: string;
                            /** @description the ids the exception is about (job_id, wallet_id, …) */
                            objects: {
                                [key: string]: unknown;
                            };
                            /** @description what was found, per class */
                            detail: {
                                [key: string]: unknown;
                            };
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            first_seen_at: string;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            last_seen_at: string;
                            resolved: boolean;
                            resolution_note: string | null;
                        }[];
                        repairs: {
                            class: string;
                            fingerprint: string;
                            action: string;
                            result: string;
                        }[];
                        classes?: string[];
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getReconciliationRun: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        clean: boolean;
                        repair: boolean;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        started_at: string;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        finished_at: string;
                        /** @description open exceptions this run found */
                        exceptions: {
                            id: string;
                            /** @example terminal_job_without_settlement */
                            class: string;
                            /** @description the ids the exception is about (job_id, wallet_id, …) */
                            objects: {
                                [key: string]: unknown;
                            };
                            /** @description what was found, per class */
                            detail: {
                                [key: string]: unknown;
                            };
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            first_seen_at: string;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            last_seen_at: string;
                            resolved: boolean;
                            resolution_note: string | null;
                        }[];
                        /** @description found again, but already resolved by an operator */
                        resolved_exceptions: {
                            id: string;
                            /** @example terminal_job_without_settlement */
                            class: string;
                            /** @description the ids the exception is about (job_id, wallet_id, …) */
                            objects: {
                                [key: string]: unknown;
                            };
                            /** @description what was found, per class */
                            detail: {
                                [key: string]: unknown;
                            };
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            first_seen_at: string;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            last_seen_at: string;
                            resolved: boolean;
                            resolution_note: string | null;
                        }[];
                        repairs: {
                            class: string;
                            fingerprint: string;
                            action: string;
                            result: string;
                        }[];
                        classes?: string[];
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    resolveReconciliationException: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    note: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        /** @example terminal_job_without_settlement */
                        class: string;
                        /** @description the ids the exception is about (job_id, wallet_id, …) */
                        objects: {
                            [key: string]: unknown;
                        };
                        /** @description what was found, per class */
                        detail: {
                            [key: string]: unknown;
                        };
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        first_seen_at: string;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        last_seen_at: string;
                        resolved: boolean;
                        resolution_note: string | null;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    importProviderUsage: {
        parameters: {
            query?: never;
            header?: {
                /** @description replays the first answer for the same key and body */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    import_id: string;
                    records: {
                        provider: string;
                        provider_job_ref: string;
                        usage: {
                            [key: string]: number;
                        };
                    }[];
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        imported: number;
                        already_imported: number;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    openConsole: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Location: /console */
            302: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getServiceIndex: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        service: "tally";
                        /** @example 0.1.0 */
                        version: string;
                        description: string;
                        links: {
                            /** @description the operator console (sign in with the admin token or a tenant API key) */
                            console: string;
                            /** @description the OpenAPI 3 document of this API */
                            openapi: string;
                            /** @description 200 once the database answers and migrations are applied */
                            health: string;
                            /** @description Prometheus text */
                            metrics: string;
                        };
                        /** @description where the documentation is */
                        docs: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getOverview: {
        parameters: {
            query?: {
                /** @description default 24h */
                range?: "24h" | "7d" | "30d";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        range: "24h" | "7d" | "30d";
                        bucket: "hour" | "day";
                        series: {
                            /** Format: date-time */
                            at: string;
                            /** @description jobs captured in the bucket */
                            captures: number;
                            /** @description jobs released in the bucket */
                            releases: number;
                            /** @description money captured (captures and adjustments), per currency, decimal strings */
                            captured: {
                                [key: string]: string;
                            };
                        }[];
                        /** @description accepted events not yet settled */
                        queue_depth: number;
                        dead_letters: number;
                        oldest_pending_seconds: number | null;
                        /** @description open reconciliation exceptions (the admin only; null for a tenant) */
                        open_exceptions: number | null;
                        alerts_last_24h: number;
                        /** @description jobs not yet captured or released */
                        jobs_open: number;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getTenant: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        name: string;
                        /**
                         * @description an object of your own labels: up to 50 keys of 1 to 40 characters, each value a string of at most 500 characters
                         * @example {
                         *       "order_id": "ord_1234"
                         *     }
                         */
                        metadata: {
                            [key: string]: string;
                        };
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        created_at: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listPrices: {
        parameters: {
            query?: {
                /** @description a whole number from 1 to 100 (default 20) */
                limit?: string;
                /** @description an object id: the page of objects after it (older) */
                starting_after?: string;
                /** @description an object id: the page of objects before it (newer) */
                ending_before?: string;
                /** @description a model name, exactly */
                model?: string;
                /**
                 * @description a three-letter ISO 4217 code in capitals
                 * @example USD
                 */
                currency?: string;
                /** @description true: only the current version of each model and currency */
                current?: "true" | "false";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            model: string;
                            currency: string;
                            version: number;
                            /** @description price per 1,000,000 units of each dimension */
                            unit_prices: {
                                [key: string]: string;
                            };
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                            /** @description the highest version of its model and currency: the one a job submitted now pins */
                            current: boolean;
                        }[];
                        /** @description more objects follow in this direction */
                        has_more: boolean;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listSettlements: {
        parameters: {
            query?: {
                /** @description a whole number from 1 to 100 (default 20) */
                limit?: string;
                /** @description an object id: the page of objects after it (older) */
                starting_after?: string;
                /** @description an object id: the page of objects before it (newer) */
                ending_before?: string;
                charge_type?: "capture" | "release" | "adjustment";
                /** @description only this job's objects */
                job_id?: string;
                /** @description an RFC 3339 instant: only objects created at or after it */
                created_gte?: string;
                /** @description an RFC 3339 instant: only objects created before it */
                created_lt?: string;
                /** @description the admin: only this tenant's objects; a tenant key may name only its own tenant (any other is 403) */
                tenant_id?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            tenant_id: string;
                            job_id: string;
                            /** @description the settlement key: tenant, job, phase (and version for adjustments) */
                            key: string;
                            charge_type: "capture" | "release" | "adjustment";
                            version: number;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            amount: string;
                            /** @enum {string} */
                            status: "posted";
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            released_remainder?: string;
                            reason?: string;
                            /** @description everything that made the amount: usage, the pinned price version, each line, the cap */
                            pricing?: {
                                /**
                                 * @description usage per dimension: non-negative safe integers
                                 * @example {
                                 *       "input_tokens": 1200,
                                 *       "output_tokens": 340
                                 *     }
                                 */
                                usage: {
                                    [key: string]: number;
                                };
                                priceBookId: string;
                                model: string;
                                currency: string;
                                priceVersion: number;
                                unitPrices: {
                                    [key: string]: string;
                                };
                                /** @example per_dimension_half_up_micro */
                                rounding: string;
                                lines: {
                                    dimension: string;
                                    units: number;
                                    /**
                                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                     * @example 12.50
                                     */
                                    unitPrice: string;
                                    /**
                                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                     * @example 12.50
                                     */
                                    amount: string;
                                }[];
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                price: string;
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                billable: string;
                                /**
                                 * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                                 * @example 12.50
                                 */
                                cap?: string;
                            };
                            event_id: string | null;
                        }[];
                        /** @description more objects follow in this direction */
                        has_more: boolean;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listEvents: {
        parameters: {
            query?: {
                /** @description a whole number from 1 to 100 (default 20) */
                limit?: string;
                /** @description an event id (provider/event_key): the page of events after it (older) */
                starting_after?: string;
                /** @description an event id (provider/event_key): the page of events before it (newer) */
                ending_before?: string;
                state?: "pending" | "processing" | "applied" | "no_effect" | "stale" | "dead" | "discarded";
                /** @description a provider name, exactly */
                provider?: string;
                /** @description only this job's objects */
                job_id?: string;
                /** @description the admin: only this tenant's objects; a tenant key may name only its own tenant (any other is 403) */
                tenant_id?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            /** @description provider/event_key: the event's path under /v1/events/ (the cursor of this list) */
                            id: string;
                            event_key: string;
                            provider: string;
                            /** @example job.completed */
                            type: string;
                            state: "pending" | "processing" | "applied" | "no_effect" | "stale" | "dead" | "discarded";
                            reason: string | null;
                            attempts: number;
                            error_code: ("usage_fetch_failed" | "settlement_failed") | null;
                            last_error?: string | null;
                            discarded_by?: string | null;
                            discarded_at?: string | null;
                            discard_note?: string | null;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            received_at: string;
                            processed_at: string | null;
                            tenant_id: string;
                            job_id: string;
                            settlement_key: string | null;
                            dead_lettered_at: string | null;
                        }[];
                        /** @description more objects follow in this direction */
                        has_more: boolean;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listAlerts: {
        parameters: {
            query?: {
                /** @description a whole number from 1 to 100 (default 20) */
                limit?: string;
                /** @description an object id: the page of objects after it (older) */
                starting_after?: string;
                /** @description an object id: the page of objects before it (newer) */
                ending_before?: string;
                class?: "usage_exceeds_reservation" | "late_success_after_release" | "late_usage_after_release" | "wallet_overdrawn" | "hold_open_past_expiry" | "webhook_endpoint_disabled";
                /** @description only this job's objects */
                job_id?: string;
                /** @description the admin: only this tenant's objects; a tenant key may name only its own tenant (any other is 403) */
                tenant_id?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            tenant_id: string;
                            job_id: string | null;
                            class: "usage_exceeds_reservation" | "late_success_after_release" | "late_usage_after_release" | "wallet_overdrawn" | "hold_open_past_expiry" | "webhook_endpoint_disabled";
                            /** @description what raised it: a settlement key, or provider/event_key */
                            source: string;
                            /** @description what was seen, per class */
                            detail: {
                                [key: string]: unknown;
                            };
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                        }[];
                        /** @description more objects follow in this direction */
                        has_more: boolean;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listReconciliationExceptions: {
        parameters: {
            query?: {
                /** @description a whole number from 1 to 100 (default 20) */
                limit?: string;
                /** @description an object id: the page of objects after it (older) */
                starting_after?: string;
                /** @description an object id: the page of objects before it (newer) */
                ending_before?: string;
                class?: "terminal_job_without_settlement" | "settlement_without_entries" | "hold_captured_and_released" | "hold_open_past_expiry" | "event_stuck" | "event_dead" | "projection_drift" | "currency_sum_nonzero" | "usage_mismatch" | "event_key_conflict" | "event_mismatch" | "late_success_after_release" | "late_usage_after_release" | "usage_exceeds_reservation" | "wallet_overdrawn" | "running_balance_drift" | "spend_period_drift" | "grant_drift" | "grant_expiry_overdue" | "allocation_mismatch" | "extension_mismatch" | "payment_mismatch" | "payment_not_credited" | "payment_event_stuck" | "recharge_unresolved";
                status?: "open" | "resolved" | "cleared";
                /** @description the admin: only this tenant's objects; a tenant key may name only its own tenant (any other is 403) */
                tenant_id?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            /** @example terminal_job_without_settlement */
                            class: string;
                            /** @description the ids the exception is about (job_id, wallet_id, …) */
                            objects: {
                                [key: string]: unknown;
                            };
                            /** @description what was found, per class */
                            detail: {
                                [key: string]: unknown;
                            };
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            first_seen_at: string;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            last_seen_at: string;
                            resolved: boolean;
                            resolution_note: string | null;
                            status: "open" | "resolved" | "cleared";
                            tenant_id: string | null;
                            cleared_at: string | null;
                        }[];
                        /** @description more objects follow in this direction */
                        has_more: boolean;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listApiKeys: {
        parameters: {
            query?: {
                /** @description a whole number from 1 to 100 (default 20) */
                limit?: string;
                /** @description an object id: the page of objects after it (older) */
                starting_after?: string;
                /** @description an object id: the page of objects before it (newer) */
                ending_before?: string;
                /** @description the admin: only this tenant's objects; a tenant key may name only its own tenant (any other is 403) */
                tenant_id?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            tenant_id: string;
                            name: string;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                            last_used_at: string | null;
                            revoked_at: string | null;
                        }[];
                        /** @description more objects follow in this direction */
                        has_more: boolean;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createApiKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description replays the first answer for the same key and body */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description yours, to tell keys apart, e.g. "production" or "ci" */
                    name: string;
                    /**
                     * Format: uuid
                     * @description the admin: the tenant whose keys these are; a tenant key may name only its own tenant (any other is 403)
                     */
                    tenant_id?: string;
                };
            };
        };
        responses: {
            /** @description a new API key, with the key itself */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        tenant_id: string;
                        name: string;
                        /** @description the bearer credential: shown only in this answer and its idempotent replay */
                        api_key: string;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        created_at: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    revokeApiKey: {
        parameters: {
            query?: {
                /** @description the admin: the tenant whose keys these are; a tenant key may name only its own tenant (any other is 403) */
                tenant_id?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description an API key without the key: it is shown only when made */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        tenant_id: string;
                        name: string;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        created_at: string;
                        last_used_at: string | null;
                        revoked_at: string | null;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWebhookEndpoints: {
        parameters: {
            query?: {
                /** @description a whole number from 1 to 100 (default 20) */
                limit?: string;
                /** @description an object id: the page of objects after it (older) */
                starting_after?: string;
                /** @description an object id: the page of objects before it (newer) */
                ending_before?: string;
                /** @description the admin: only this tenant's objects; a tenant key may name only its own tenant (any other is 403) */
                tenant_id?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            tenant_id: string;
                            url: string;
                            events: string[];
                            description: string | null;
                            disabled: boolean;
                            disabled_at: string | null;
                            disabled_reason: string | null;
                            failing_since: string | null;
                            previous_secret_expires_at: string | null;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            created_at: string;
                        }[];
                        /** @description more objects follow in this direction */
                        has_more: boolean;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createWebhookEndpoint: {
        parameters: {
            query?: never;
            header?: {
                /** @description replays the first answer for the same key and body */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description http or https, no credentials; public addresses only unless the operator allows more */
                    url: string;
                    /** @description the event types sent to this endpoint: any of job.settled, wallet.credited, wallet.balance_low, wallet.overdrawn, hold.expired, job.hold_extended, job.hold_exhausted, grant.created, grant.activated, grant.depleted, grant.expired, grant.voided, payment.succeeded, payment.failed, payment.refunded, payment.disputed, auto_recharge.disabled; ["*"] for all, including types added later */
                    events: ("job.settled" | "wallet.credited" | "wallet.balance_low" | "wallet.overdrawn" | "hold.expired" | "job.hold_extended" | "job.hold_exhausted" | "grant.created" | "grant.activated" | "grant.depleted" | "grant.expired" | "grant.voided" | "payment.succeeded" | "payment.failed" | "payment.refunded" | "payment.disputed" | "auto_recharge.disabled" | "*")[];
                    /** @description yours, to tell endpoints apart */
                    description?: string;
                    /**
                     * Format: uuid
                     * @description the admin: the tenant the endpoint is for; a tenant key may name only its own tenant (any other is 403)
                     */
                    tenant_id?: string;
                };
            };
        };
        responses: {
            /** @description a new webhook endpoint with its signing secret */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        tenant_id: string;
                        url: string;
                        events: string[];
                        description: string | null;
                        disabled: boolean;
                        disabled_at: string | null;
                        disabled_reason: string | null;
                        failing_since: string | null;
                        previous_secret_expires_at: string | null;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        created_at: string;
                        /** @description whsec_…: verify deliveries with it; shown only in this answer and its idempotent replay */
                        secret: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getWebhookEndpoint: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description a webhook endpoint, without its secret */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        tenant_id: string;
                        url: string;
                        events: string[];
                        description: string | null;
                        disabled: boolean;
                        disabled_at: string | null;
                        disabled_reason: string | null;
                        failing_since: string | null;
                        previous_secret_expires_at: string | null;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        created_at: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateWebhookEndpoint: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description the event types sent to this endpoint: any of job.settled, wallet.credited, wallet.balance_low, wallet.overdrawn, hold.expired, job.hold_extended, job.hold_exhausted, grant.created, grant.activated, grant.depleted, grant.expired, grant.voided, payment.succeeded, payment.failed, payment.refunded, payment.disputed, auto_recharge.disabled; ["*"] for all, including types added later */
                    events?: ("job.settled" | "wallet.credited" | "wallet.balance_low" | "wallet.overdrawn" | "hold.expired" | "job.hold_extended" | "job.hold_exhausted" | "grant.created" | "grant.activated" | "grant.depleted" | "grant.expired" | "grant.voided" | "payment.succeeded" | "payment.failed" | "payment.refunded" | "payment.disputed" | "auto_recharge.disabled" | "*")[];
                    description?: string | null;
                    disabled?: boolean;
                };
            };
        };
        responses: {
            /** @description a webhook endpoint, without its secret */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        tenant_id: string;
                        url: string;
                        events: string[];
                        description: string | null;
                        disabled: boolean;
                        disabled_at: string | null;
                        disabled_reason: string | null;
                        failing_since: string | null;
                        previous_secret_expires_at: string | null;
                        /**
                         * Format: date-time
                         * @description RFC 3339, UTC
                         */
                        created_at: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    rotateWebhookEndpointSecret: {
        parameters: {
            query?: never;
            header?: {
                /** @description replays the first answer for the same key and body */
                "idempotency-key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description how long the old secret keeps signing beside the new one (default 86400; 0: not at all) */
                    grace_seconds?: number;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        /** @description the new whsec_ secret: shown only in this answer and its idempotent replay */
                        secret: string;
                        previous_secret_expires_at: string | null;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    pingWebhookEndpoint: {
        parameters: {
            query?: never;
            header?: {
                /** @description replays the first answer for the same key and body */
                "idempotency-key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description Default Response */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message_id: string;
                        endpoint_id: string;
                        /** @enum {string} */
                        type: "webhook.ping";
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWebhookEndpointAttempts: {
        parameters: {
            query?: {
                /** @description a whole number from 1 to 100 (default 20) */
                limit?: string;
                /** @description an object id: the page of objects after it (older) */
                starting_after?: string;
                /** @description an object id: the page of objects before it (newer) */
                ending_before?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            delivery_id: string;
                            /** @description the webhook-id sent */
                            message_id: string;
                            type: string;
                            /**
                             * Format: date-time
                             * @description RFC 3339, UTC
                             */
                            started_at: string;
                            status: number | null;
                            latency_ms: number;
                            response_excerpt: string | null;
                            error: string | null;
                        }[];
                        /** @description more objects follow in this direction */
                        has_more: boolean;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    replayWebhookEndpointMessages: {
        parameters: {
            query?: never;
            header?: {
                /** @description replays the first answer for the same key and body */
                "idempotency-key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description RFC 3339 */
                    since: string;
                    /** @description RFC 3339; default now */
                    until?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        endpoint_id: string;
                        /** @description messages queued again to this endpoint */
                        replayed: number;
                        next_since: string | null;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    replayWebhookMessage: {
        parameters: {
            query?: never;
            header?: {
                /** @description replays the first answer for the same key and body */
                "idempotency-key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** Format: uuid */
                    endpoint_id?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        message_id: string;
                        /** @description new deliveries queued (same message id: receivers drop what they already have) */
                        deliveries: number;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWalletThresholds: {
        parameters: {
            query?: {
                /** @description a whole number from 1 to 100 (default 20) */
                limit?: string;
                /** @description an object id: the page of objects after it (older) */
                starting_after?: string;
                /** @description an object id: the page of objects before it (newer) */
                ending_before?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            wallet_id: string;
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            amount: string;
                            /** @description true while available is at or above amount: the next fall below it is announced (wallet.balance_low) */
                            armed: boolean;
                            /** Format: date-time */
                            created_at: string;
                        }[];
                        /** @description more objects follow in this direction */
                        has_more: boolean;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createWalletThreshold: {
        parameters: {
            query?: never;
            header?: {
                /** @description replays the first answer for the same key and body */
                "idempotency-key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                     * @example 12.50
                     */
                    amount: string;
                };
            };
        };
        responses: {
            /** @description a threshold on the wallet's available amount (balance − reserved) */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        wallet_id: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        amount: string;
                        /** @description true while available is at or above amount: the next fall below it is announced (wallet.balance_low) */
                        armed: boolean;
                        /** Format: date-time */
                        created_at: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteWalletThreshold: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                threshold_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the threshold as it was; it no longer exists */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        wallet_id: string;
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        amount: string;
                        /** @description true while available is at or above amount: the next fall below it is announced (wallet.balance_low) */
                        armed: boolean;
                        /** Format: date-time */
                        created_at: string;
                        /** @enum {boolean} */
                        deleted: true;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listSpendLimits: {
        parameters: {
            query?: {
                /** @description a whole number from 1 to 100 (default 20) */
                limit?: string;
                /** @description an object id: the page of objects after it (older) */
                starting_after?: string;
                /** @description an object id: the page of objects before it (newer) */
                ending_before?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            tenant_id: string;
                            currency: string;
                            period: "day" | "month";
                            /**
                             * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                             * @example 12.50
                             */
                            amount: string;
                            /**
                             * Format: date-time
                             * @description the current period's start (00:00 UTC of today, or of the month's first day), by the database's clock
                             */
                            period_start: string;
                            /**
                             * @description a signed decimal string in major units
                             * @example -0.000150
                             */
                            spent: string;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        }[];
                        /** @description more objects follow in this direction */
                        has_more: boolean;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    setSpendLimit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description a three-letter ISO 4217 code in capitals
                     * @example USD
                     */
                    currency: string;
                    period: "day" | "month";
                    /**
                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                     * @example 12.50
                     */
                    amount: string;
                };
            };
        };
        responses: {
            /** @description a limit on the tenant's spend in a currency per UTC day or month; spent: the current period's captures and adjustments plus its open holds */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        tenant_id: string;
                        currency: string;
                        period: "day" | "month";
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        amount: string;
                        /**
                         * Format: date-time
                         * @description the current period's start (00:00 UTC of today, or of the month's first day), by the database's clock
                         */
                        period_start: string;
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        spent: string;
                        /** Format: date-time */
                        created_at: string;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            /** @description a limit on the tenant's spend in a currency per UTC day or month; spent: the current period's captures and adjustments plus its open holds */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        tenant_id: string;
                        currency: string;
                        period: "day" | "month";
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        amount: string;
                        /**
                         * Format: date-time
                         * @description the current period's start (00:00 UTC of today, or of the month's first day), by the database's clock
                         */
                        period_start: string;
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        spent: string;
                        /** Format: date-time */
                        created_at: string;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteSpendLimit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                limit_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the limit as it was; it no longer applies */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        tenant_id: string;
                        currency: string;
                        period: "day" | "month";
                        /**
                         * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                         * @example 12.50
                         */
                        amount: string;
                        /**
                         * Format: date-time
                         * @description the current period's start (00:00 UTC of today, or of the month's first day), by the database's clock
                         */
                        period_start: string;
                        /**
                         * @description a signed decimal string in major units
                         * @example -0.000150
                         */
                        spent: string;
                        /** Format: date-time */
                        created_at: string;
                        /** Format: date-time */
                        updated_at: string;
                        /** @enum {boolean} */
                        deleted: true;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getStripeSettings: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        processor: "stripe";
                        livemode: boolean;
                        /** @description the last four characters of the configured key (the key itself is never returned) */
                        api_key_last4: string;
                        /** @description how many webhook secrets verify (they are never returned) */
                        webhook_secrets: number;
                        base_url: string | null;
                        /** @description the Stripe account whose Connect events are accepted (null: none) */
                        account: string | null;
                        /** @description where Stripe sends its events: add this endpoint in the dashboard */
                        webhook_path: string;
                        updated_at: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    setStripeSettings: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Stripe's secret (or restricted) key: write-only, never returned; its mode (live or test) decides which events are accepted */
                    api_key: string;
                    /** @description every secret verifies: add the new one, then remove the old one to rotate */
                    webhook_secrets: string[];
                    /** @description Stripe's API (the default) or a local Stripe for tests */
                    base_url?: string;
                    /** @description an extension: the Stripe account (acct_…) whose Connect events are accepted; absent, every event naming an account is refused (400 connect_account_refused) */
                    account?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        processor: "stripe";
                        livemode: boolean;
                        /** @description the last four characters of the configured key (the key itself is never returned) */
                        api_key_last4: string;
                        /** @description how many webhook secrets verify (they are never returned) */
                        webhook_secrets: number;
                        base_url: string | null;
                        /** @description the Stripe account whose Connect events are accepted (null: none) */
                        account: string | null;
                        /** @description where Stripe sends its events: add this endpoint in the dashboard */
                        webhook_path: string;
                        updated_at: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createCheckoutSession: {
        parameters: {
            query?: never;
            header: {
                /** @description required: the call is applied once per key; a retry with the same key and body replays the first answer */
                "idempotency-key": string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                     * @example 12.50
                     */
                    amount: string;
                    success_url: string;
                    cancel_url: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description the Checkout Session's id (cs_…) */
                        id: string;
                        /** @description Stripe's hosted payment page: send the customer there */
                        url: string;
                        /** @description the grant, awaiting payment, that the payment activates */
                        grant_id: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAutoRecharge: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        wallet_id: string;
                        enabled: boolean;
                        threshold: string;
                        target: string;
                        monthly_limit: string | null;
                        consecutive_failures: number;
                        disabled_reason: string | null;
                        /** @description a recharge is awaiting its payment */
                        in_flight: boolean;
                        /** @description why a recharge due now could not be made: Stripe not configured, no card learnt from a successful checkout yet, or the monthly limit reached; null when it could (or auto-recharge is off) */
                        blocked_reason: "payments_not_configured" | "no_payment_method" | "monthly_limit" | null;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    setAutoRecharge: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    enabled: boolean;
                    /**
                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                     * @example 12.50
                     */
                    threshold: string;
                    /**
                     * @description a decimal string in major units with at most 6 decimals, e.g. "12.50"
                     * @example 12.50
                     */
                    target: string;
                    monthly_limit?: string | null;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        wallet_id: string;
                        enabled: boolean;
                        threshold: string;
                        target: string;
                        monthly_limit: string | null;
                        consecutive_failures: number;
                        disabled_reason: string | null;
                        /** @description a recharge is awaiting its payment */
                        in_flight: boolean;
                        /** @description why a recharge due now could not be made: Stripe not configured, no card learnt from a successful checkout yet, or the monthly limit reached; null when it could (or auto-recharge is off) */
                        blocked_reason: "payments_not_configured" | "no_payment_method" | "monthly_limit" | null;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    receiveProviderWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                provider: string;
            };
            cookie?: never;
        };
        /** @description the provider's own webhook body, by the provider's kind; any content type, read as raw bytes (signatures are over them) */
        requestBody: {
            content: {
                "application/json": {
                    type: "job.started" | "job.progress" | "job.completed" | "job.failed" | "job.canceled" | "job.usage_corrected";
                    timestamp?: string;
                    data: {
                        job_id?: string;
                        provider_job_ref?: string;
                        tenant_id?: string;
                        model?: string;
                        currency?: string;
                        usage?: unknown;
                        correction?: number;
                    };
                } | ({
                    /** @description the prediction id: the job's provider_job_ref */
                    id: string;
                    status: "starting" | "processing" | "succeeded" | "failed" | "canceled";
                    model?: string;
                    metrics?: {
                        /** @description seconds; billed as predict_ms, half-up */
                        predict_time?: number;
                    } & {
                        [key: string]: unknown;
                    };
                } & {
                    [key: string]: unknown;
                }) | ({
                    /** @description the webhook event id */
                    id: string;
                    type: "response.completed" | "response.incomplete" | "response.failed" | "response.cancelled" | "batch.completed" | "batch.failed" | "batch.expired" | "batch.cancelled";
                    created_at?: number;
                    data: {
                        /** @description the batch or response id: the job's provider_job_ref */
                        id: string;
                    } & {
                        [key: string]: unknown;
                    };
                } & {
                    [key: string]: unknown;
                }) | ({
                    /** @description the job's provider_job_ref */
                    request_id: string;
                    status: "OK" | "ERROR";
                    payload?: unknown;
                } & {
                    [key: string]: unknown;
                });
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        status: "accepted" | "already_accepted";
                        event_key: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    receiveStripeEvent: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        status: "accepted" | "already_accepted";
                        event_id: string;
                    };
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description every error: a stable snake_case code, a message, and the field at fault when there is one */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}
