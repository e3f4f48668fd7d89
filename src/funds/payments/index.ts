/**
 * funds/payments/: Stripe (docs/payments.md) — its events in and Tally's calls out (two
 * queues of the queue engine), what an event does to a wallet's money, Checkout,
 * auto-recharge and the sealed settings. The door: outside funds/payments/, src/ imports it
 * only through this file (.dependency-cruiser.cjs, doors-only-funds-payments); the one
 * exception is the posting writer's recharge hook (funds/apply-postings.ts →
 * recharge.ts), which this file would close into a cycle.
 *
 * Each operation with the refusals it can throw or return, as formance's ledger controller
 * lists its errors. Stripe's own refusals are the SDK's errors (Stripe.errors.StripeError):
 * failureKind(error) says whether the same call may be made again ('retry') or would get
 * the same answer ('definitive'). A funds/ class (GrantNotFound, WalletNotFound,
 * PostingRefused) out of an effect below is a bug: the Stripe object's records name a grant
 * and wallet that exist, and the posting module was asked only what it accepts.
 */

/**
 * Settings (PUT/GET /v1/payment-settings/stripe), the API key sealed with the server secret.
 *
 * - savePaymentSettings(db, serverSecret, settings) → the settings without the key. Refuses nothing.
 * - readPaymentSettings(db) → the settings without the key, or null: Stripe is not configured.
 * - readStripeCredentials(db, serverSecret) → the settings with the key, or null: not configured.
 *   Throws: SettingsUnsealable (sealed under another server secret).
 * - keptKeyAccount(db, serverSecret, apiKey) → the stored key's account when `apiKey` is that
 *   key, else null. keyAccount(credentials) → the key's Stripe account, or a fingerprint of
 *   the key when Stripe does not say: never throws.
 * - openWebhookSecrets(settings, serverSecret) → the secrets that verify Stripe's signatures.
 *   Throws: SecretUnsealable (src/sealed-secrets.ts: sealed under another server secret).
 * - opensPaymentSettings(db, serverSecret): whether this secret opens what is sealed;
 *   sealClearWebhookSecrets(db, serverSecret) → how many secrets stored in the clear it
 *   sealed (0 when a concurrent PUT won). Neither refuses anything.
 * - stripeClient(credentials, timeoutMs?): the SDK's client (no retries of its own); Stripe.
 */
export {
  SettingsUnsealable,
  keptKeyAccount,
  openWebhookSecrets,
  opensPaymentSettings,
  readPaymentSettings,
  readStripeCredentials,
  savePaymentSettings,
  sealClearWebhookSecrets,
  type PaymentSettings,
} from './settings.js';
export { keyAccount } from './key-account.js';
export { Stripe, failureKind, stripeClient } from './stripe-client.js';

/**
 * Checkout (POST /v1/wallets/{id}/checkout): a grant awaiting payment, then Stripe's customer
 * and session outside any transaction, keyed by the request so a retry gets the same session.
 *
 * - checkoutRequestKey(principal, walletId, idempotencyKey): the checkout's identity (pure).
 * - startCheckout(pool, credentials, stripe, request) → the session's id and url, and its
 *   grant; `replayed` when an earlier request with the key completed it.
 *   Throws: InvalidCheckoutAmount (not a whole number of the currency's minor unit, or below
 *   Stripe's minimum charge); CheckoutKeyReused (the key came with another body);
 *   CheckoutRefused (Stripe refused this checkout for good before: its grant is canceled,
 *   a new key starts another); Stripe's errors (a definitive 400, 402 or 404 cancels the
 *   grant first).
 */
export { CheckoutKeyReused, CheckoutRefused, InvalidCheckoutAmount, checkoutRequestKey, startCheckout } from './checkout.js';

/**
 * Auto-recharge settings (PUT/GET /v1/wallets/{id}/auto-recharge).
 *
 * - readAutoRecharge(db, walletId) → the settings and why a recharge due now could not be
 *   made (blocked_reason), or null: never set.
 * - saveAutoRecharge(db, wallet, settings) → the settings; enabling resets the failures.
 *   Refuses nothing (the caller found the wallet).
 */
export { readAutoRecharge, saveAutoRecharge, type AutoRecharge } from './recharge.js';

/**
 * Stripe's events in (intake/stripe-receive.ts, `tally payments sync`): stored before the 2xx.
 *
 * - stripeEventRefusal(event, settings) → 'connect_account_refused' (another Stripe
 *   account's event), 'livemode_mismatch' (the other mode's), or null: accepted.
 *   refusalMessage(…): the 400's words for a refusal.
 * - storeStripeEvent(db, event) → StoreOutcome, its refusals as results: 'accepted',
 *   'duplicate' (the same bytes again), 'conflict' (the same id with other bytes: counted,
 *   never processed), 'refused' with its reason (stored, never applied).
 * - syncStripeEvents(db, stripe, settings, since) → what it listed, stored, skipped and
 *   refused. Throws: Stripe's errors (listing the events).
 */
export { refusalMessage, stripeEventRefusal } from './event-refusal.js';
export { storeStripeEvent, type StoreOutcome } from './stripe-events.js';
export { syncStripeEvents } from './sync.js';

/**
 * The payments worker (worker/payments-worker.ts): both queues claimed and marked under the
 * claim's fencing token.
 *
 * - STRIPE_EVENTS_TABLE, STRIPE_CALLS_TABLE: the two queues' tables for the engine.
 * - claimStripeEvents(db, limit, leaseSeconds), claimStripeCalls(…) → the claimed rows.
 * - markStripeEvent(tx, claim, outcome), waitStripeEvent(tx, claim, reason, delayMs) →
 *   false: the claim is no longer current, nothing written.
 * - STRIPE_EVENT_RETRY, STRIPE_EVENT_WAIT, STRIPE_CALL_RETRY: their retry policies.
 * - meaningOf(type, object) → what an event means; one without effect is { kind: 'ignored',
 *   reason }, never a throw. refundOf(object) → a refund's facts, or null: incomplete.
 * - applyStripeEvent(tx, meaning, context) → PaymentEffect, its refusals as results:
 *   'applied', 'no_effect' with why (not a Tally payment, already paid or canceled, a
 *   payment_mismatch recorded, …), 'wait' (it needs an object Tally has not seen yet: put
 *   it back). Each effect under its Stripe object's lock, keyed by its id: once, in any order.
 *   Throws: Error (charge.refunded without its refunds: list them through the API first).
 * - recordRechargeAnswer(tx, claim, answer) → 'succeeded', 'processing' or 'declined'
 *   (its grant canceled, a failure counted).
 *   Throws: LeaseLost (queue/engine/: the call's claim is no longer current, nothing recorded).
 * - cancelRechargeTurnedOff(tx, claim) → true: canceled (auto-recharge turned off since);
 *   false: it goes ahead. Throws: LeaseLost. rechargeStillOn(db, walletId): whether it is on.
 */
export { STRIPE_EVENTS_TABLE, type ClaimedStripeEvent } from './events-table.js';
export { STRIPE_CALLS_TABLE, type ClaimedCall } from './calls-table.js';
export { STRIPE_EVENT_RETRY, STRIPE_EVENT_WAIT, claimStripeEvents, markStripeEvent, waitStripeEvent } from './stripe-events.js';
export { STRIPE_CALL_RETRY, claimStripeCalls } from './stripe-calls.js';
export { meaningOf, refundOf, type EventMeaning, type PaymentSuccess, type RefundFacts } from './event-meaning.js';
export { applyStripeEvent } from './payment-settle.js';
export { cancelRechargeTurnedOff, rechargeStillOn, recordRechargeAnswer, type RechargeAnswer } from './recharge-answer.js';

/**
 * Operators (`tally payments`, reconciliation's repairs).
 *
 * - findStripeEvent(db, id) → the event's row, or null: unknown.
 * - requeueDeadStripeEvent(db, id) → false: no dead event with this id (only dead ones are
 *   re-queued; a refused one never is).
 * - creditStrandedPayment(tx, paymentIntent) → what it did, as a sentence: 'skipped: …'
 *   (no such applied payment, or its grant holds its money), 'recorded as payment_mismatch'
 *   (the wallet cannot hold it), or 'credited …' on a paid grant of its own. Run again, it
 *   writes nothing.
 */
export { findStripeEvent, requeueDeadStripeEvent } from './stripe-events.js';
export { creditStrandedPayment } from './payment-settle.js';
