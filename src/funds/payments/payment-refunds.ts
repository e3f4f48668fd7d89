import type { Queryable } from '../../db/pool.js';
import { findGrant } from '../grants.js';
import { refundTakesMoney, refundUndone, type DisputeFacts, type RefundFacts } from './event-meaning.js';
import { minorToMicros, sameCurrency } from './minor-units.js';
import {
  findDispute,
  findPayment,
  findRefund,
  lockStripeObject,
  notePaymentIds,
  otherOpenDispute,
  saveDispute,
  saveRefund,
  type PaymentRow,
} from './records.js';
import { enqueueMessages } from '../../outbound/enqueue.js';
import type { PaymentEffect } from './payment-effect.js';
import { paymentMessage } from './payment-messages.js';
import { freezeGrant, postRefundToPayer, reverseRefund } from './payment-writes.js';

/**
 * Refunds and disputes of a payment (CONTRACT.md "Payments (Stripe)"), each keyed by its
 * Stripe id and taken under its lock, then its grant's wallet lock (payment-writes.ts). A
 * refund or dispute of a payment not seen yet waits for it.
 */

export interface PaymentLookup {
  charge: string | null;
  paymentIntent: string | null;
}

async function paymentOf(tx: Queryable, about: PaymentLookup): Promise<PaymentRow | null> {
  if (about.paymentIntent) {
    const byIntent = await findPayment(tx, { paymentIntent: about.paymentIntent });
    if (byIntent) return byIntent;
  }
  return about.charge ? findPayment(tx, { charge: about.charge }) : null;
}

/**
 * Refunds by their re_ id, in one transaction (charge.refunded lists several): each posts
 * once while pending or succeeded (from its grant's unheld remaining, the rest as debt)
 * and is credited back once when it turns failed or canceled. A refund of a payment not
 * seen yet waits for it.
 */
export async function applyRefunds(tx: Queryable, refunds: readonly RefundFacts[], charge: PaymentLookup | null): Promise<PaymentEffect> {
  if (refunds.length === 0) return { kind: 'no_effect', reason: 'no_refunds_listed' };
  const sorted = [...refunds].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const r of sorted) await lockStripeObject(tx, r.id);
  const reasons: string[] = [];
  let applied = false;
  for (const refund of sorted) {
    const about = { paymentIntent: refund.paymentIntent ?? charge?.paymentIntent ?? null, charge: refund.charge ?? charge?.charge ?? null };
    const payment = await paymentOf(tx, about);
    if (!payment) return { kind: 'wait', reason: `waiting_for_payment ${about.paymentIntent ?? about.charge ?? ''}`.trim() };
    const effect = await applyRefund(tx, refund, payment);
    if (effect.kind === 'applied') applied = true;
    reasons.push(effect.reason ?? 'refund_applied');
  }
  return applied ? { kind: 'applied', reason: null } : { kind: 'no_effect', reason: [...new Set(reasons)].join(', ') };
}

async function applyRefund(tx: Queryable, refund: RefundFacts, payment: PaymentRow): Promise<PaymentEffect> {
  if (payment.outcome !== 'activated' || !payment.grant_id) return { kind: 'no_effect', reason: 'payment_brought_no_money' };
  const grant = (await findGrant(tx, { id: payment.grant_id }))!;
  const existing = await findRefund(tx, refund.id);
  const row = {
    refund_id: refund.id,
    payment_intent: payment.payment_intent,
    grant_id: grant.id,
    tenant_id: grant.tenant_id,
    amount_minor: refund.amountMinor,
    status: refund.status,
    posted: existing?.posted ?? false,
    reversed: existing?.reversed ?? false,
  };
  if (!sameCurrency(refund.currency, payment.currency)) {
    // Never converted: 1000 JPY is not 10.00 USD. Kept, posted never, named by reconciliation.
    await saveRefund(tx, { ...row, mismatch: currencyMismatch('refund', refund.currency, payment.currency) });
    return { kind: 'no_effect', reason: 'payment_mismatch' };
  }
  const amount = minorToMicros(refund.amountMinor, grant.currency);
  const key = `${grant.tenant_id}:refund:${refund.id}`;
  if (existing && refundUndone(existing.status) && !refundUndone(refund.status))
    return { kind: 'no_effect', reason: 'refund_already_ended' }; // an older event arriving late
  if (refundTakesMoney(refund.status)) {
    if (row.posted) {
      await saveRefund(tx, row);
      return { kind: 'no_effect', reason: 'refund_already_posted' };
    }
    await postRefundToPayer(tx, { grantId: grant.id, amount, settlementKey: key, entry: 'refund', reference: `stripe ${refund.id}` });
    await saveRefund(tx, { ...row, posted: true });
    await notePaymentIds(tx, grant.id, { refund: refund.id });
    await enqueueMessages(tx, [
      paymentMessage('payment.refunded', grant, payment.payment_intent, { amount, refund_id: refund.id, status: refund.status }),
    ]);
    return { kind: 'applied', reason: null };
  }
  if (refundUndone(refund.status)) {
    if (row.posted && !row.reversed) {
      await reverseRefund(tx, { grantId: grant.id, amount, settlementKey: key, reference: `stripe ${refund.id}` });
      await saveRefund(tx, { ...row, reversed: true });
      await enqueueMessages(tx, [
        paymentMessage('payment.refunded', grant, payment.payment_intent, { amount, refund_id: refund.id, status: refund.status }),
      ]);
      return { kind: 'applied', reason: 'refund_credited_back' };
    }
    await saveRefund(tx, row);
    return { kind: 'no_effect', reason: row.reversed ? 'refund_already_credited_back' : 'refund_failed_before_posting' };
  }
  await saveRefund(tx, row);
  return { kind: 'no_effect', reason: `refund_${refund.status}` };
}

async function disputedPayment(tx: Queryable, dispute: DisputeFacts): Promise<PaymentRow | PaymentEffect> {
  await lockStripeObject(tx, dispute.id);
  const payment = await paymentOf(tx, dispute);
  if (!payment) return { kind: 'wait', reason: `waiting_for_payment ${dispute.paymentIntent ?? dispute.charge ?? ''}`.trim() };
  if (payment.outcome !== 'activated' || !payment.grant_id) return { kind: 'no_effect', reason: 'payment_brought_no_money' };
  if (!sameCurrency(dispute.currency, payment.currency)) {
    // Neither frozen nor posted: kept with why, named by reconciliation (payment_mismatch).
    const grant = (await findGrant(tx, { id: payment.grant_id }))!;
    // closed: it never froze anything, so no later close has anything to undo
    await saveDispute(tx, {
      ...disputeRow(dispute, payment, grant, true),
      mismatch: currencyMismatch('dispute', dispute.currency, payment.currency),
    });
    return { kind: 'no_effect', reason: 'payment_mismatch' };
  }
  return payment;
}

/** A dispute's record: Stripe's facts, its payment and the grant it is about. */
function disputeRow(dispute: DisputeFacts, payment: PaymentRow, grant: { id: string; tenant_id: string }, closed: boolean) {
  return {
    dispute_id: dispute.id,
    payment_intent: payment.payment_intent,
    grant_id: grant.id,
    tenant_id: grant.tenant_id,
    amount_minor: dispute.amountMinor,
    status: dispute.status,
    closed,
  };
}

function currencyMismatch(what: 'refund' | 'dispute', theirs: string, payments: string): string {
  return `the ${what} is in ${theirs.toUpperCase()}, its payment in ${payments.toUpperCase()}: nothing posted`;
}

/** An open dispute freezes its grant: it funds no new hold or charge. */
export async function applyDisputeOpened(tx: Queryable, dispute: DisputeFacts): Promise<PaymentEffect> {
  const payment = await disputedPayment(tx, dispute);
  if ('kind' in payment) return payment;
  const existing = await findDispute(tx, dispute.id);
  if (existing) return { kind: 'no_effect', reason: existing.closed ? 'dispute_already_closed' : 'dispute_already_open' };
  const grant = (await findGrant(tx, { id: payment.grant_id! }))!;
  await freezeGrant(tx, grant.id, true);
  await saveDispute(tx, disputeRow(dispute, payment, grant, false));
  await notePaymentIds(tx, grant.id, { dispute: dispute.id });
  const amount = minorToMicros(dispute.amountMinor, grant.currency);
  await enqueueMessages(tx, [
    paymentMessage('payment.disputed', grant, payment.payment_intent, { amount, dispute_id: dispute.id, status: 'open' }),
  ]);
  return { kind: 'applied', reason: null };
}

/**
 * A closed dispute unfreezes its grant (unless another dispute of it is open); lost, its
 * amount leaves the wallet once (keyed by the dispute), like a refund.
 */
export async function applyDisputeClosed(tx: Queryable, dispute: DisputeFacts): Promise<PaymentEffect> {
  const payment = await disputedPayment(tx, dispute);
  if ('kind' in payment) return payment;
  const existing = await findDispute(tx, dispute.id);
  if (existing?.closed) return { kind: 'no_effect', reason: 'dispute_already_closed' };
  const grant = (await findGrant(tx, { id: payment.grant_id! }))!;
  if (!(await otherOpenDispute(tx, grant.id, dispute.id))) await freezeGrant(tx, grant.id, false);
  const amount = minorToMicros(dispute.amountMinor, grant.currency);
  if (dispute.status === 'lost') {
    await postRefundToPayer(tx, {
      grantId: grant.id,
      amount,
      settlementKey: `${grant.tenant_id}:dispute:${dispute.id}`,
      entry: 'dispute_loss',
      reference: `stripe ${dispute.id}`,
    });
  }
  await saveDispute(tx, disputeRow(dispute, payment, grant, true));
  await notePaymentIds(tx, grant.id, { dispute: dispute.id });
  await enqueueMessages(tx, [
    paymentMessage('payment.disputed', grant, payment.payment_intent, { amount, dispute_id: dispute.id, status: dispute.status }),
  ]);
  return { kind: 'applied', reason: dispute.status === 'lost' ? 'dispute_lost' : `dispute_${dispute.status}` };
}
