import type { Queryable } from '../../db/pool.js';
import { findGrant, markCanceled, type GrantRow } from '../grants.js';
import type { EventMeaning, PaymentSuccess } from './event-meaning.js';
import { minorToMicros, sameCurrency } from './minor-units.js';
import { MAX_CONSECUTIVE_FAILURES, countRechargeFailure, resetRechargeFailures } from './recharge.js';
import {
  findPayment,
  insertPayment,
  lockStripeObject,
  notePaymentIds,
  notePaymentMethod,
  repointPayment,
  setPaymentCharge,
  type PaymentRow,
} from './records.js';
import { lockWalletFunds } from '../wallet-funds.js';
import { AmountOutOfRange, MAX_AMOUNT_MICROS, formatAmount } from '../../money/index.js';
import { enqueueMessages, type NewMessage } from '../../outbound/enqueue.js';
import { findWallet, type AccountRow } from '../accounts.js';
import { activateGrant, createGrant } from '../grant-writes.js';
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
 * Money taken always lands, or is named: a grant that can no longer take it (voided before
 * its money came, or paid already by another payment intent) has the money land on a paid
 * grant of its own, keyed by the payment intent; money that would take the wallet past the
 * largest balance Tally keeps is recorded as a mismatch (reconciliation: payment_mismatch).
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
    const activation = await activateGrant(tx, grant.id, { paid: true });
    if (grant.source === 'auto_recharge') await resetRechargeFailures(tx, grant.wallet_id);
    if (activation === 'balance_limit') return recordOverLimit(tx, row, grant, paid);
    if (activation !== 'activated') {
      const wallet = (await findWallet(tx, grant.wallet_id))!;
      const why = activation === 'voided' ? `grant ${grant.id} was voided before its payment came` : `grant ${grant.id} was paid already`;
      return landOnOwnGrant(tx, payment, wallet, row, paid, why);
    }
    await insertPayment(tx, { ...row, outcome: 'activated' });
    await notePaymentIds(tx, grant.id, idsOf(payment));
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
    return landOnOwnGrant(tx, payment, wallet, row, minorToMicros(payment.amountMinor, wallet.currency), null);
  }
  await insertPayment(tx, { ...row, detail: 'metadata names neither tally_grant_id nor tally_wallet_id' });
  return { kind: 'no_effect', reason: 'not_a_tally_payment' };
}

/**
 * The payment's money on a paid grant of its own (source stripe_payment), keyed by the
 * payment intent: a payment that named only a wallet, or whose grant can no longer take
 * it (`why`). Recorded as the payment's grant, so its refunds and disputes find it.
 */
async function landOnOwnGrant(
  tx: Queryable,
  payment: PaymentSuccess,
  wallet: AccountRow,
  row: PaymentRow,
  amount: bigint,
  why: string | null,
): Promise<PaymentEffect> {
  const landed = await creditPaymentGrant(tx, wallet, payment.paymentIntent, amount, payment.charge, why);
  if (!landed) return recordOverLimit(tx, { ...row, tenant_id: wallet.tenant_id, wallet_id: wallet.id }, null, amount);
  await insertPayment(tx, {
    ...row,
    grant_id: landed.id,
    tenant_id: landed.tenant_id,
    wallet_id: landed.wallet_id,
    outcome: 'activated',
    detail: why,
  });
  await enqueueMessages(tx, [paymentMessage('payment.succeeded', landed, payment.paymentIntent, {})]);
  return { kind: 'applied', reason: why === null ? null : 'credited_on_its_own_grant' };
}

/**
 * A paid grant of `amount` keyed by the payment intent (`stripe_payment:pi_…`): created once,
 * its money entering now. Null when that would take the wallet past the largest balance
 * Tally keeps (nothing written).
 */
export async function creditPaymentGrant(
  tx: Queryable,
  wallet: AccountRow,
  paymentIntent: string,
  amount: bigint,
  charge: string | null,
  why: string | null,
): Promise<GrantRow | null> {
  try {
    // createGrant refuses the limit before it writes anything: nothing to roll back.
    const { grant } = await createGrant(tx, {
      wallet,
      amount,
      category: 'paid',
      priority: 50,
      grantKey: `stripe_payment:${paymentIntent}`,
      source: 'stripe_payment',
      reference: why === null ? `stripe ${paymentIntent}` : `stripe ${paymentIntent}: ${why}`,
      payment: { payment_intent: paymentIntent, ...(charge ? { charge } : {}) },
    });
    return grant;
  } catch (error) {
    if (error instanceof AmountOutOfRange) return null;
    throw error;
  }
}

/**
 * The repair of payment_not_credited: a payment recorded as applied whose grant never took
 * its money (voided while it awaited payment, before such a void was refused). Its money
 * lands on a paid grant of its own, keyed by the payment intent, and the payment record
 * points at that grant (its refunds and disputes then find the money). Run again, it
 * finds the payment credited and writes nothing.
 */
export async function creditStrandedPayment(tx: Queryable, paymentIntent: string): Promise<string> {
  await lockStripeObject(tx, paymentIntent);
  const payment = await findPayment(tx, { paymentIntent });
  if (!payment || payment.outcome !== 'activated' || !payment.grant_id) return 'skipped: no such applied payment';
  const grant = (await findGrant(tx, { id: payment.grant_id }))!;
  if (grant.activated_at !== null) return 'skipped: its grant holds its money';
  const wallet = (await findWallet(tx, grant.wallet_id))!;
  const amount = minorToMicros(payment.amount_minor, grant.currency);
  const why = `grant ${grant.id} never took this payment (voided before it came)`;
  const landed = await creditPaymentGrant(tx, wallet, paymentIntent, amount, payment.charge_id, why);
  if (!landed) {
    await repointPayment(tx, paymentIntent, {
      outcome: 'mismatch',
      grantId: grant.id,
      detail: `${why}; crediting it would pass the balance limit`,
    });
    return 'recorded as payment_mismatch: the wallet cannot hold it';
  }
  await repointPayment(tx, paymentIntent, { outcome: 'activated', grantId: landed.id, detail: why });
  await enqueueMessages(tx, [paymentMessage('payment.succeeded', landed, paymentIntent, {})]);
  return `credited ${formatAmount(amount)} ${grant.currency} on grant ${landed.id}`;
}

/** Money taken that the wallet cannot hold (the balance limit): recorded, never applied, named by reconciliation. */
async function recordOverLimit(tx: Queryable, row: PaymentRow, grant: GrantRow | null, amount: bigint): Promise<PaymentEffect> {
  await insertPayment(tx, {
    ...row,
    outcome: 'mismatch',
    detail: `${formatAmount(amount)} would take the wallet's balance past ${formatAmount(MAX_AMOUNT_MICROS)}, the most Tally keeps: not credited`,
  });
  if (grant) await notePaymentIds(tx, grant.id, { payment_intent: row.payment_intent });
  return { kind: 'no_effect', reason: 'payment_mismatch' };
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
