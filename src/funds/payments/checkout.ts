import { createHash } from 'node:crypto';
import type { Pool, Queryable } from '../../db/pool.js';
import { withTransaction } from '../../db/transaction.js';
import { formatAmount, type Micros } from '../../money/index.js';
import { findGrant, insertGrant, markCanceled } from '../grants.js';
import { announceGrantCreated } from '../grant-announce.js';
import { lockWalletFunds } from '../wallet-funds.js';
import { chargeStepMinor, microsToMinorExact, minimumChargeMicros, minorToMicros, stripeCurrency, stripeAmount } from './minor-units.js';
import { findCustomer, notePaymentIds, saveCustomer, type CustomerScope } from './records.js';
import type { StripeCredentials } from './settings.js';
import { failureKind, type Stripe } from './stripe-client.js';

/**
 * A Checkout top-up (POST /v1/wallets/{id}/checkout-sessions), in three steps so that no
 * call to Stripe runs inside a transaction and a crash anywhere is completed by a retry:
 * 1. one transaction: the grant (awaiting payment) and the checkout row, once per
 *    Idempotency-Key (its request's hash kept: another body under the key is refused);
 * 2. outside any transaction: the tenant's Stripe customer (created once, Idempotency-Key
 *    with the tenant's id) and the Checkout Session (Idempotency-Key with the grant's id,
 *    parameters rebuilt from the stored row, so a retry asks for exactly the same session
 *    and Stripe answers with the first one: no second session);
 * 3. one transaction: the session's id and url kept on the row and the grant.
 */

export interface CheckoutRequest {
  /** principal + wallet + Idempotency-Key, hashed: the checkout's identity */
  requestKey: string;
  requestHash: Buffer;
  wallet: { id: string; tenant_id: string; currency: string };
  amount: Micros;
  successUrl: string;
  cancelUrl: string;
}

export interface CheckoutAnswer {
  id: string;
  url: string;
  grant_id: string;
  /** true when an earlier request with this key had completed it */
  replayed: boolean;
}

export class CheckoutKeyReused extends Error {
  constructor() {
    super('this Idempotency-Key was used with a different request body; use a new key');
    this.name = 'CheckoutKeyReused';
  }
}

/** A retry of a checkout Stripe refused for good: its grant is canceled; a new Idempotency-Key starts another. */
export class CheckoutRefused extends Error {
  constructor(readonly grantId: string) {
    super(`Stripe refused this checkout before (its grant ${grantId} is canceled); fix the request and use a new Idempotency-Key`);
    this.name = 'CheckoutRefused';
  }
}

export class InvalidCheckoutAmount extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidCheckoutAmount';
  }
}

/** The checkout's identity: who asked, for which wallet, under which Idempotency-Key. */
export function checkoutRequestKey(principal: string, walletId: string, idempotencyKey: string): string {
  return createHash('sha256')
    .update(JSON.stringify(['tally-checkout-v1', principal, walletId, idempotencyKey]))
    .digest('hex');
}

/** The amount in the currency's minor unit: whole, and at least Stripe's minimum charge. */
export function checkoutAmountMinor(amount: Micros, currency: string): bigint {
  const minor = microsToMinorExact(amount, currency);
  if (minor === null) {
    const step = minorToMicros(chargeStepMinor(currency), currency);
    throw new InvalidCheckoutAmount(`Stripe charges ${currency} only in whole multiples of ${formatAmount(step)} ${currency}`);
  }
  if (amount < minimumChargeMicros(currency)) throw new InvalidCheckoutAmount(`Stripe charges at least its minimum in ${currency}`);
  return minor;
}

interface CheckoutRow {
  grant_id: string;
  request_hash: Buffer;
  tenant_id: string;
  wallet_id: string;
  livemode: boolean;
  amount_minor: bigint;
  currency: string;
  success_url: string;
  cancel_url: string;
  session_id: string | null;
  session_url: string | null;
}

export async function startCheckout(
  pool: Pool,
  credentials: StripeCredentials,
  stripe: Stripe,
  request: CheckoutRequest,
): Promise<CheckoutAnswer> {
  const amountMinor = checkoutAmountMinor(request.amount, request.wallet.currency);
  const row = await withTransaction(pool, (tx) => checkoutRow(tx, request, amountMinor, credentials.livemode));
  if (!row.request_hash.equals(request.requestHash)) throw new CheckoutKeyReused();
  if (row.session_id && row.session_url) return { id: row.session_id, url: row.session_url, grant_id: row.grant_id, replayed: true };
  if ((await findGrant(pool, { id: row.grant_id }))?.canceled_at) throw new CheckoutRefused(row.grant_id);

  const customer = await customerOf(pool, stripe, { tenantId: row.tenant_id, livemode: row.livemode, keyAccount: credentials.keyAccount });
  const metadata = { tally_grant_id: row.grant_id, tally_wallet_id: row.wallet_id };
  const session = await stripe.checkout.sessions
    .create(
      {
        mode: 'payment',
        customer,
        line_items: [
          {
            quantity: 1,
            price_data: {
              currency: row.currency,
              unit_amount: stripeAmount(BigInt(row.amount_minor)),
              product_data: { name: `Credit for wallet ${row.wallet_id}` },
            },
          },
        ],
        client_reference_id: row.grant_id,
        metadata,
        payment_intent_data: { metadata, setup_future_usage: 'off_session' },
        success_url: row.success_url,
        cancel_url: row.cancel_url,
        // Adaptive Pricing would let the customer pay in a local currency: the payment would
        // then not be the grant's amount and currency, and the grant would stay unpaid
        // (payment_mismatch). The wallet's currency is the only one a grant can take.
        adaptive_pricing: { enabled: false },
      },
      { idempotencyKey: `tally-checkout-${row.grant_id}` },
    )
    .catch(async (error: unknown) => {
      if (refusedForGood(error)) await withTransaction(pool, (tx) => cancelRefusedCheckout(tx, row.grant_id));
      throw error;
    });
  if (!session.url) throw new Error(`Stripe answered Checkout Session ${session.id} without a url`);
  await withTransaction(pool, async (tx) => {
    await tx.query('update stripe_checkouts set session_id = $2, session_url = $3 where grant_id = $1 and session_id is null', [
      row.grant_id,
      session.id,
      session.url,
    ]);
    await notePaymentIds(tx, row.grant_id, { checkout_session: session.id });
  });
  return { id: session.id, url: session.url, grant_id: row.grant_id, replayed: false };
}

/**
 * Stripe refused the session for what it carries (invalid parameters, a currency or amount
 * it does not take): asking again under the same key gets the same answer, and no payment
 * can come for it. Its grant is canceled so it does not await a payment for ever; an
 * authentication or permission refusal (a wrong key: the operator fixes it) is not final.
 */
function refusedForGood(error: unknown): boolean {
  const status = (error as { statusCode?: number } | null)?.statusCode;
  return failureKind(error) === 'definitive' && (status === 400 || status === 402 || status === 404);
}

async function cancelRefusedCheckout(tx: Queryable, grantId: string): Promise<void> {
  const grant = await findGrant(tx, { id: grantId });
  if (!grant) return;
  await lockWalletFunds(tx, grant.wallet_id);
  // The caller is answered with Stripe's refusal at once: no payment.failed is sent for it.
  await markCanceled(tx, grantId);
}

/** Step 1: the checkout's row and grant, made once per request key (the wallet's lock serialises retries). */
async function checkoutRow(tx: Queryable, request: CheckoutRequest, amountMinor: bigint, livemode: boolean): Promise<CheckoutRow> {
  const { wallet } = request;
  const locked = await lockWalletFunds(tx, wallet.id);
  if (!locked) throw new Error(`wallet ${wallet.id} vanished`);
  const found = await tx.query<CheckoutRow>('select * from stripe_checkouts where request_key = $1', [request.requestKey]);
  if (found.rows[0]) return found.rows[0];
  const grantKey = `checkout:${request.requestKey}`;
  let grantId = (await findGrant(tx, { grantKey }))?.id;
  if (!grantId) {
    const created = await insertGrant(tx, {
      tenantId: wallet.tenant_id,
      walletId: wallet.id,
      currency: wallet.currency,
      category: 'paid',
      priority: 50,
      amount: request.amount,
      source: 'stripe_checkout',
      grantKey,
      reference: 'Stripe Checkout',
      awaitingPayment: true,
      payment: {},
    });
    grantId = created!.id;
    await announceGrantCreated(tx, grantId, false);
  }
  const inserted = await tx.query<CheckoutRow>(
    `insert into stripe_checkouts (grant_id, request_key, request_hash, tenant_id, wallet_id, livemode, amount_minor, currency, success_url, cancel_url)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) returning *`,
    [
      grantId,
      request.requestKey,
      request.requestHash,
      wallet.tenant_id,
      wallet.id,
      livemode,
      amountMinor.toString(),
      stripeCurrency(wallet.currency),
      request.successUrl,
      request.cancelUrl,
    ],
  );
  return inserted.rows[0]!;
}

/**
 * The tenant's Stripe customer in this mode and account: created once, kept. The key names
 * the tenant and mode; Stripe keeps Idempotency-Keys per account, so another account's
 * key makes that account's customer.
 */
async function customerOf(pool: Pool, stripe: Stripe, scope: CustomerScope): Promise<string> {
  const known = await findCustomer(pool, scope);
  if (known) return known.customer_id;
  const customer = await stripe.customers.create(
    { metadata: { tally_tenant_id: scope.tenantId } },
    { idempotencyKey: `tally-customer-${scope.tenantId}-${scope.livemode ? 'live' : 'test'}` },
  );
  return (await saveCustomer(pool, scope, customer.id)).customer_id;
}
