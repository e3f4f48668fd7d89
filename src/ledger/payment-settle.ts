import type { Queryable } from '../db/pool.js';
import { findGrant, markCanceled, type GrantRow } from '../funds/grants.js';
import type { EventMeaning, PaymentSuccess } from '../funds/payments/event-meaning.js';
import { minorToMicros, sameCurrency } from '../funds/payments/minor-units.js';
import { MAX_CONSECUTIVE_FAILURES, countRechargeFailure, resetRechargeFailures } from '../funds/payments/recharge.js';
import {
  findPayment,
  insertPayment,
  lockStripeObject,
  notePaymentIds,
  notePaymentMethod,
  setPaymentCharge,
  type PaymentRow,
} from '../funds/payments/records.js';
import { lockWalletFunds } from '../funds/wallet-funds.js';
import { formatAmount } from '../money/index.js';
import { enqueueMessages, type NewMessage } from '../outbound/enqueue.js';
import { findWallet } from './accounts.js';
import { activateGrant, createGrant } from './grant-writes.js';
import type { EventContext, PaymentEffect } from './payment-effect.js';
import { paymentMessage } from './payment-messages.js';
import { applyDisputeClosed, applyDisputeOpened, applyRefunds } from './payment-refunds.js';

/**
 * What a Stripe event does to the ledger (CONTRACT.md "Payments (Stripe)"), in the
 * caller's transaction: each effect is taken under its Stripe object's lock (a payment
 * intent, a refund, a dispute), then its grant's wallet lock (the writers of
 * grant-writes.ts and payment-writes.ts), and keyed by that object's id, so the same
 * payment delivered as several events, any number of times, in any order, has one effect.
 * An event that needs an object Tally has not seen yet (a refund before its payment)
 * answers `wait`: the worker puts it back and tries again.
 */
export type { EventContext, PaymentEffect } from './payment-effect.js';

export async function applyStripeEvent(tx: Queryable, meaning: EventMeaning, context: EventContext): Promise<PaymentEffect> {
  switch (meaning.kind) {
    case 'payment_succeeded':
      return applyPaymentSuccess(tx, meaning, context);
    case 'checkout_failed':
      return applyCheckoutFailure(tx, meaning.grantId, meaning.checkoutSession, meaning.why);
    case 'payment_failed':
      return applyPaymentFailure(tx, meaning.grantId, meaning.paymentIntent, meaning.code ?? 'payment_failed');
    case 'refund':
      return applyRefunds(tx, [meaning.refund], null);
    case 'charge_refunded':
      if (meaning.refunds === null) throw new Error('charge.refunded without its refunds: list them through the API before settling');
      return applyRefunds(tx, meaning.refunds, { charge: meaning.charge, paymentIntent: meaning.paymentIntent });
    case 'dispute_opened':
      return applyDisputeOpened(tx, meaning.dispute);
    case 'dispute_closed':
      return applyDisputeClosed(tx, meaning.dispute);
    case 'ignored':
      return { kind: 'no_effect', reason: meaning.reason };
  }
}

/**
 * One payment, one grant: keyed by the payment intent. Its grant (named by the metadata)
 * is activated once — even a canceled one, the money was taken — when the paid amount and
 * currency are the grant's; a payment naming only a wallet creates a paid grant of what
 * was received (source stripe_payment); one naming neither is recorded without effect.
 */
export async function applyPaymentSuccess(tx: Queryable, payment: PaymentSuccess, context: EventContext): Promise<PaymentEffect> {
  await lockStripeObject(tx, payment.paymentIntent);
  const existing = await findPayment(tx, { paymentIntent: payment.paymentIntent });
  if (existing) {
    if (payment.charge && existing.charge_id === null) {
      await setPaymentCharge(tx, payment.paymentIntent, payment.charge);
      if (existing.grant_id) await notePaymentIds(tx, existing.grant_id, { charge: payment.charge });
    }
    if (existing.grant_id) await rememberPaymentMethod(tx, payment, existing.grant_id, context);
    return {
      kind: 'no_effect',
      reason: existing.outcome === 'activated' ? 'payment_already_applied' : `payment_already_recorded_as_${existing.outcome}`,
    };
  }
  const row: PaymentRow = {
    payment_intent: payment.paymentIntent,
    outcome: 'no_grant',
    grant_id: null,
    tenant_id: null,
    wallet_id: null,
    charge_id: payment.charge,
    amount_minor: payment.amountMinor,
    currency: payment.currency.toLowerCase(),
    detail: null,
  };
  if (payment.grantId) {
    const grant = await findGrant(tx, { id: payment.grantId });
    if (!grant) {
      await insertPayment(tx, { ...row, detail: `metadata names grant ${payment.grantId}, which does not exist` });
      return { kind: 'no_effect', reason: 'unknown_grant' };
    }
    Object.assign(row, { grant_id: grant.id, tenant_id: grant.tenant_id, wallet_id: grant.wallet_id });
    const paid = sameCurrency(grant.currency, payment.currency) ? minorToMicros(payment.amountMinor, grant.currency) : null;
    if (paid !== grant.amount) {
      const detail =
        paid === null
          ? `paid in ${payment.currency}, the grant is in ${grant.currency}`
          : `paid ${formatAmount(paid)} ${grant.currency}, the grant is ${formatAmount(grant.amount)}`;
      await insertPayment(tx, { ...row, outcome: 'mismatch', detail });
      await notePaymentIds(tx, grant.id, idsOf(payment));
      return { kind: 'no_effect', reason: 'payment_mismatch' };
    }
    await activateGrant(tx, grant.id, { paid: true });
    await insertPayment(tx, { ...row, outcome: 'activated' });
    await notePaymentIds(tx, grant.id, idsOf(payment));
    if (grant.source === 'auto_recharge') await resetRechargeFailures(tx, grant.wallet_id);
    await rememberPaymentMethod(tx, payment, grant.id, context);
    await enqueueMessages(tx, [paymentMessage('payment.succeeded', grant, payment.paymentIntent, {})]);
    return { kind: 'applied', reason: null };
  }
  if (payment.walletId) {
    const wallet = await findWallet(tx, payment.walletId);
    if (!wallet || !sameCurrency(wallet.currency, payment.currency) || payment.amountMinor === 0n) {
      await insertPayment(tx, {
        ...row,
        wallet_id: wallet?.id ?? null,
        outcome: 'mismatch',
        detail: wallet
          ? `paid in ${payment.currency}, the wallet is in ${wallet.currency}`
          : `metadata names wallet ${payment.walletId}, which does not exist`,
      });
      return { kind: 'no_effect', reason: wallet ? 'payment_mismatch' : 'unknown_wallet' };
    }
    const { grant } = await createGrant(tx, {
      wallet,
      amount: minorToMicros(payment.amountMinor, wallet.currency),
      category: 'paid',
      priority: 50,
      grantKey: `stripe_payment:${payment.paymentIntent}`,
      source: 'stripe_payment',
      reference: `stripe ${payment.paymentIntent}`,
      payment: { payment_intent: payment.paymentIntent, ...(payment.charge ? { charge: payment.charge } : {}) },
    });
    await insertPayment(tx, { ...row, grant_id: grant.id, tenant_id: grant.tenant_id, wallet_id: grant.wallet_id, outcome: 'activated' });
    await enqueueMessages(tx, [paymentMessage('payment.succeeded', grant, payment.paymentIntent, {})]);
    return { kind: 'applied', reason: null };
  }
  await insertPayment(tx, { ...row, detail: 'metadata names neither tally_grant_id nor tally_wallet_id' });
  return { kind: 'no_effect', reason: 'not_a_tally_payment' };
}

function idsOf(payment: PaymentSuccess) {
  return {
    payment_intent: payment.paymentIntent,
    ...(payment.charge ? { charge: payment.charge } : {}),
    ...(payment.checkoutSession ? { checkout_session: payment.checkoutSession } : {}),
  };
}

/** A successful checkout's payment method charges the tenant's later recharges. */
async function rememberPaymentMethod(tx: Queryable, payment: PaymentSuccess, grantId: string, context: EventContext): Promise<void> {
  if (!payment.paymentMethod || !payment.customer) return;
  const grant = await findGrant(tx, { id: grantId });
  if (grant?.source !== 'stripe_checkout') return;
  await notePaymentMethod(tx, payment.customer, payment.paymentMethod, context.created);
}

/** An expired or failed checkout: its grant never brings money (a later success still would). */
async function applyCheckoutFailure(tx: Queryable, grantId: string | null, session: string, why: string): Promise<PaymentEffect> {
  const grant = grantId ? await findGrant(tx, { id: grantId }) : null;
  if (!grant) return { kind: 'no_effect', reason: 'not_a_tally_checkout' };
  await lockWalletFunds(tx, grant.wallet_id);
  if (!(await markCanceled(tx, grant.id)))
    return { kind: 'no_effect', reason: grant.activated_at ? 'grant_already_paid' : 'grant_already_canceled' };
  await notePaymentIds(tx, grant.id, { checkout_session: session });
  await enqueueMessages(tx, [paymentMessage('payment.failed', grant, null, { reason: why })]);
  return { kind: 'applied', reason: why };
}

/**
 * payment_intent.payment_failed: a recharge's decline cancels its grant and counts a
 * failure; during a Checkout it changes nothing (the customer may retry in the session).
 */
async function applyPaymentFailure(tx: Queryable, grantId: string | null, paymentIntent: string, code: string): Promise<PaymentEffect> {
  const grant = grantId ? await findGrant(tx, { id: grantId }) : null;
  if (!grant) return { kind: 'no_effect', reason: 'not_a_tally_payment' };
  if (grant.source !== 'auto_recharge') return { kind: 'no_effect', reason: 'checkout_may_be_retried' };
  await lockStripeObject(tx, paymentIntent);
  return (await failRecharge(tx, grant, paymentIntent, code))
    ? { kind: 'applied', reason: code }
    : { kind: 'no_effect', reason: 'recharge_already_ended' };
}

/**
 * A recharge that failed: its grant canceled and one failure counted — once, whatever
 * tells it (the call's answer, the event, both) — the third in a row disabling
 * auto-recharge (auto_recharge.disabled, once). False when it had ended already.
 */
export async function failRecharge(tx: Queryable, grant: GrantRow, paymentIntent: string | null, reason: string): Promise<boolean> {
  await lockWalletFunds(tx, grant.wallet_id);
  if (!(await markCanceled(tx, grant.id))) return false;
  if (paymentIntent) await notePaymentIds(tx, grant.id, { payment_intent: paymentIntent });
  const counted = await countRechargeFailure(
    tx,
    grant.wallet_id,
    `${MAX_CONSECUTIVE_FAILURES} recharges in a row failed (last: ${reason})`,
  );
  const messages: NewMessage[] = [paymentMessage('payment.failed', grant, paymentIntent, { reason })];
  if (counted.disabled) {
    messages.push({
      tenantId: grant.tenant_id,
      type: 'auto_recharge.disabled',
      data: {
        wallet_id: grant.wallet_id,
        currency: grant.currency,
        consecutive_failures: counted.failures,
        reason: `recharges failed ${counted.failures} times in a row (last: ${reason})`,
      },
    });
  }
  await enqueueMessages(tx, messages);
  return true;
}
