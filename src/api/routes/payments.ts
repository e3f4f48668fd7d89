import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { receiveStripeEvent } from '../../intake/stripe-receive.js';
import { isUuid } from '../../ids.js';
import { findWallet, type AccountRow } from '../../funds/index.js';
import { formatAmount, parseAmount } from '../../money/index.js';
import type { Queryable } from '../../db/pool.js';
import {
  CheckoutKeyReused,
  CheckoutRefused,
  InvalidCheckoutAmount,
  SettingsUnsealable,
  Stripe,
  checkoutRequestKey,
  failureKind,
  keptKeyAccount,
  keyAccount,
  readAutoRecharge,
  readPaymentSettings,
  readStripeCredentials,
  saveAutoRecharge,
  savePaymentSettings,
  startCheckout,
  stripeClient,
  type AutoRecharge,
  type PaymentSettings,
} from '../../funds/payments/index.js';
import { WebhookRefused } from '../../webhooks/errors.js';
import { principalKey, requireAccess, tenantScope } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { canonicalJson, idempotencyKeyOf } from '../idempotency.js';
import { BODY_LIMIT_BYTES } from '../limits.js';
import { AmountString, IdParams, RequiredIdempotencyHeader, bearerAuth, errors } from '../schemas.js';

/** CONTRACT.md "Payments (Stripe)": the operator's settings, Stripe's webhook, Checkout top-ups, auto-recharge. */

const WebhookSecret = Type.String({
  pattern: '^whsec_[A-Za-z0-9+/=_-]{1,200}$',
  description: "a webhook endpoint's signing secret from Stripe's dashboard (whsec_…)",
});
const SettingsBody = Type.Object({
  api_key: Type.String({
    pattern: '^(sk|rk)_(test|live)_[A-Za-z0-9_]{1,250}$',
    description:
      "Stripe's secret (or restricted) key: write-only, never returned; its mode (live or test) decides which events are accepted",
  }),
  webhook_secrets: Type.Array(WebhookSecret, {
    minItems: 1,
    maxItems: 10,
    description: 'every secret verifies: add the new one, then remove the old one to rotate',
  }),
  base_url: Type.Optional(
    Type.String({
      maxLength: 2048,
      pattern: '^https?://[^\\s/?#@]+(/[^\\s?#]*)?$',
      description: "Stripe's API (the default) or a local Stripe for tests",
    }),
  ),
  account: Type.Optional(
    Type.String({
      pattern: '^acct_[A-Za-z0-9]{1,250}$',
      description:
        'an extension: the Stripe account (acct_…) whose Connect events are accepted; absent, every event naming an account is refused (400 connect_account_refused)',
    }),
  ),
});
const SettingsView = Type.Object({
  processor: Type.Literal('stripe'),
  livemode: Type.Boolean(),
  api_key_last4: Type.String({ description: 'the last four characters of the configured key (the key itself is never returned)' }),
  webhook_secrets: Type.Integer({ minimum: 1, description: 'how many webhook secrets verify (they are never returned)' }),
  base_url: Type.Union([Type.String(), Type.Null()]),
  account: Type.Union([Type.String(), Type.Null()], { description: 'the Stripe account whose Connect events are accepted (null: none)' }),
  webhook_path: Type.String({ description: 'where Stripe sends its events: add this endpoint in the dashboard' }),
  updated_at: Type.String(),
});
const WEBHOOK_PATH = '/v1/payments/stripe/webhook';

function settingsView(settings: PaymentSettings) {
  return {
    processor: 'stripe' as const,
    livemode: settings.livemode,
    api_key_last4: settings.apiKeyLast4,
    webhook_secrets: settings.storedWebhookSecrets.length,
    base_url: settings.baseUrl,
    account: settings.account,
    webhook_path: WEBHOOK_PATH,
    updated_at: settings.updatedAt.toISOString(),
  };
}

const Url = Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://\\S+$' });
const CheckoutBody = Type.Object({
  amount: AmountString,
  success_url: Url,
  cancel_url: Url,
});
const CheckoutView = Type.Object({
  id: Type.String({ description: "the Checkout Session's id (cs_…)" }),
  url: Type.String({ description: "Stripe's hosted payment page: send the customer there" }),
  grant_id: Type.String({ description: 'the grant, awaiting payment, that the payment activates' }),
});

const AutoRechargeBody = Type.Object({
  enabled: Type.Boolean(),
  threshold: AmountString,
  target: AmountString,
  monthly_limit: Type.Optional(Type.Union([AmountString, Type.Null()])),
});
const AutoRechargeView = Type.Object({
  wallet_id: Type.String(),
  enabled: Type.Boolean(),
  threshold: Type.String(),
  target: Type.String(),
  monthly_limit: Type.Union([Type.String(), Type.Null()]),
  consecutive_failures: Type.Integer({ minimum: 0 }),
  disabled_reason: Type.Union([Type.String(), Type.Null()]),
  in_flight: Type.Boolean({ description: 'a recharge is awaiting its payment' }),
  blocked_reason: Type.Union(
    [Type.Literal('payments_not_configured'), Type.Literal('no_payment_method'), Type.Literal('monthly_limit'), Type.Null()],
    {
      description:
        'why a recharge due now could not be made: Stripe not configured, no card learnt from a successful checkout yet, or the monthly limit reached; null when it could (or auto-recharge is off)',
    },
  ),
});

function autoRechargeView(walletId: string, r: AutoRecharge | null) {
  return {
    wallet_id: walletId,
    enabled: r?.enabled ?? false,
    threshold: formatAmount(BigInt(r?.threshold ?? 0n)),
    target: formatAmount(BigInt(r?.target ?? 0n)),
    monthly_limit: r?.monthly_limit === null || r?.monthly_limit === undefined ? null : formatAmount(BigInt(r.monthly_limit)),
    consecutive_failures: r?.consecutive_failures ?? 0,
    disabled_reason: r?.disabled_reason ?? null,
    in_flight: r?.in_flight ?? false,
    blocked_reason: r?.blocked_reason ?? null,
  };
}

async function visibleWallet(db: Queryable, request: FastifyRequest, id: string): Promise<AccountRow> {
  const wallet = isUuid(id) ? await findWallet(db, id, tenantScope(request) ?? undefined) : null;
  if (!wallet) throw notFound('wallet');
  return wallet;
}

export function paymentRoutes(app: ApiApp, { pool }: ApiContext): void {
  app.put(
    '/v1/payment-settings/stripe',
    {
      onRequest: requireAccess('admin', pool),
      schema: {
        summary: 'Configure Stripe: the API key (write-only, sealed at rest) and the webhook secrets',
        tags: ['payments'],
        security: bearerAuth,
        body: SettingsBody,
        response: { 200: SettingsView, ...errors(400, 401, 403) },
      },
    },
    async (request) => {
      const credentials = { apiKey: request.body.api_key, baseUrl: request.body.base_url ?? null };
      // Which account the key belongs to scopes the tenants' customers: asked of Stripe
      // before the write, outside any transaction; the same key put again keeps its answer.
      const account =
        (await keptKeyAccount(pool, request.server.serverSecret, credentials.apiKey)) ?? (await keyAccount(credentials));
      const saved = await savePaymentSettings(pool, request.server.serverSecret, {
        ...credentials,
        webhookSecrets: request.body.webhook_secrets,
        account: request.body.account ?? null,
        keyAccount: account,
      });
      return settingsView(saved);
    },
  );

  app.get(
    '/v1/payment-settings/stripe',
    {
      onRequest: requireAccess('admin', pool),
      schema: {
        summary: 'The Stripe settings, without the key or the secrets',
        tags: ['payments'],
        security: bearerAuth,
        response: { 200: SettingsView, ...errors(401, 403, 404) },
      },
    },
    async () => {
      const settings = await readPaymentSettings(pool);
      if (!settings) throw new ApiError(404, 'not_found', 'Stripe is not configured: PUT /v1/payment-settings/stripe');
      return settingsView(settings);
    },
  );

  // Stripe signs the exact bytes: this scope keeps the body as a Buffer.
  app.register(async (scope: ApiApp) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES }, (_request, body, done) => done(null, body));
    scope.post(
      WEBHOOK_PATH,
      {
        schema: {
          summary: 'Receive a Stripe event (signed: Stripe-Signature). 200 means durably received, not yet applied',
          tags: ['payments'],
          response: {
            200: Type.Object({ status: Type.Union([Type.Literal('accepted'), Type.Literal('already_accepted')]), event_id: Type.String() }),
            ...errors(400, 401, 409, 413, 503),
          },
        },
      },
      async (request) => {
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        try {
          const result = await receiveStripeEvent(pool, request.server.serverSecret, raw, request.headers);
          return { status: result.status, event_id: result.eventId };
        } catch (error) {
          if (!(error instanceof WebhookRefused)) throw error;
          request.log.warn({ status: error.status, code: error.code, reason: error.message }, 'stripe event refused');
          throw new ApiError(error.status, error.code, error.message);
        }
      },
    );
  });

  app.post(
    '/v1/wallets/:id/checkout-sessions',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: 'Top up a wallet by card: a grant awaiting payment and a Stripe Checkout Session for it (Idempotency-Key required)',
        tags: ['payments'],
        security: bearerAuth,
        params: IdParams,
        headers: RequiredIdempotencyHeader,
        body: CheckoutBody,
        response: { 201: CheckoutView, ...errors(400, 401, 403, 404, 409, 422, 502, 503) },
      },
    },
    async (request, reply) => {
      const key = idempotencyKeyOf(request, true)!;
      const amount = parseAmount(request.body.amount);
      const wallet = await visibleWallet(pool, request, request.params.id);
      const credentials = await readStripeCredentials(pool, request.server.serverSecret).catch((error: unknown) => {
        if (error instanceof SettingsUnsealable) throw new ApiError(503, 'payments_unavailable', error.message);
        throw error;
      });
      if (!credentials)
        throw new ApiError(
          409,
          'payments_not_configured',
          'Stripe is not configured: the operator sets it with PUT /v1/payment-settings/stripe',
        );
      try {
        const answer = await startCheckout(pool, credentials, stripeClient(credentials), {
          requestKey: checkoutRequestKey(principalKey(request.principal!), wallet.id, key),
          requestHash: createHash('sha256').update(canonicalJson(request.body)).digest(),
          wallet,
          amount,
          successUrl: request.body.success_url,
          cancelUrl: request.body.cancel_url,
        });
        if (answer.replayed) reply.header('Idempotent-Replayed', 'true');
        return reply.code(201).send({ id: answer.id, url: answer.url, grant_id: answer.grant_id });
      } catch (error) {
        if (error instanceof CheckoutKeyReused) throw new ApiError(422, 'idempotency_key_reused', error.message);
        if (error instanceof CheckoutRefused) throw new ApiError(502, 'payment_processor_error', error.message);
        if (error instanceof InvalidCheckoutAmount) throw new ApiError(400, 'invalid_amount', error.message, 'amount');
        if (error instanceof Stripe.errors.StripeError) {
          request.log.warn({ code: error.code, type: error.type, status: error.statusCode }, 'stripe refused or failed a checkout call');
          if (failureKind(error) === 'definitive')
            throw new ApiError(502, 'payment_processor_error', `Stripe refused the Checkout Session: ${error.message}`);
          throw new ApiError(
            503,
            'payment_processor_unavailable',
            'Stripe did not answer; retry with the same Idempotency-Key (no second session is made)',
          );
        }
        throw error;
      }
    },
  );

  app.put(
    '/v1/wallets/:id/auto-recharge',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary:
          "Set the wallet's auto-recharge: below threshold, charge the latest checkout's card up to target (enabled: true also resets failures)",
        tags: ['payments'],
        security: bearerAuth,
        params: IdParams,
        body: AutoRechargeBody,
        response: { 200: AutoRechargeView, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const wallet = await visibleWallet(pool, request, request.params.id);
      const threshold = parseAmount(request.body.threshold, { allowZero: true });
      const target = parseAmount(request.body.target);
      const limit = request.body.monthly_limit ? parseAmount(request.body.monthly_limit) : null;
      if (target <= threshold) throw new ApiError(400, 'invalid_auto_recharge', 'target must be above threshold', 'target');
      const saved = await saveAutoRecharge(
        pool,
        { id: wallet.id, tenantId: wallet.tenant_id },
        { enabled: request.body.enabled, threshold, target, monthlyLimit: limit },
      );
      return autoRechargeView(wallet.id, saved);
    },
  );

  app.get(
    '/v1/wallets/:id/auto-recharge',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: "The wallet's auto-recharge, its failures and whether a recharge is in flight",
        tags: ['payments'],
        security: bearerAuth,
        params: IdParams,
        response: { 200: AutoRechargeView, ...errors(401, 403, 404) },
      },
    },
    async (request) => {
      const wallet = await visibleWallet(pool, request, request.params.id);
      return autoRechargeView(wallet.id, await readAutoRecharge(pool, wallet.id));
    },
  );
}
