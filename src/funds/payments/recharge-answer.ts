import type { Queryable } from '../../db/pool.js';
import { findGrant, markCanceled } from '../grants.js';
import { lockWalletFunds } from '../wallet-funds.js';
import type { ClaimedCall } from './calls-table.js';
import { finishStripeCall } from './stripe-calls.js';
import { LeaseLost } from '../../queue/engine/index.js';
import { applyPaymentSuccess, failRecharge } from './payment-settle.js';

/**
 * Stripe's answer to a recharge's payment intent, recorded under the call's claim (a
 * worker whose lease ran out records nothing: LeaseLost rolls everything back). It counts
 * like the intent's own event, and both are keyed alike: a success activates the grant
 * once (by the payment intent, applyPaymentSuccess); a refusal cancels it and counts one
 * failure, once (failRecharge); `processing` leaves it in flight until the event tells.
 */
export type RechargeAnswer =
  | {
      kind: 'intent';
      intent: {
        id: string;
        status: string;
        amount_received: number;
        currency: string;
        customer: string | null;
        payment_method: string | null;
        latest_charge: string | null;
      };
    }
  | { kind: 'refused'; code: string; paymentIntent: string | null };

export async function recordRechargeAnswer(tx: Queryable, claim: ClaimedCall, answer: RechargeAnswer): Promise<string> {
  const finish = async (outcome: string, paymentIntent: string | null, error: string | null) => {
    if (!(await finishStripeCall(tx, claim, { outcome, paymentIntent, error }))) throw new LeaseLost(`stripe call ${claim.id}`);
  };
  const grant = (await findGrant(tx, { id: claim.grant_id }))!;
  if (answer.kind === 'refused') {
    await finish('declined', answer.paymentIntent, answer.code);
    await failRecharge(tx, grant, answer.paymentIntent, answer.code);
    return 'declined';
  }
  const { intent } = answer;
  if (intent.status === 'succeeded') {
    await finish('succeeded', intent.id, null);
    await applyPaymentSuccess(
      tx,
      {
        kind: 'payment_succeeded',
        paymentIntent: intent.id,
        amountMinor: BigInt(intent.amount_received),
        currency: intent.currency,
        grantId: claim.grant_id,
        walletId: claim.wallet_id,
        customer: intent.customer,
        paymentMethod: intent.payment_method,
        charge: intent.latest_charge,
        via: 'payment_intent',
        checkoutSession: null,
      },
      { created: null },
    );
    return 'succeeded';
  }
  if (intent.status === 'processing') {
    await finish('processing', intent.id, null);
    return 'processing';
  }
  // requires_action (an off-session charge the customer must confirm), requires_payment_method, canceled
  await finish('declined', intent.id, intent.status);
  await failRecharge(tx, grant, intent.id, intent.status);
  return 'declined';
}

/**
 * Before each attempt to create a recharge's payment intent: a recharge whose wallet has
 * turned auto-recharge off since it was decided is canceled instead of charged (CONTRACT.md
 * "Payments", Edges). Under the wallet's lock (the recharge's grant is the wallet's) and
 * the call's claim. No failure is counted: nothing was declined. A charge Stripe did make
 * on an earlier attempt is still credited when its event arrives (or by `tally payments
 * sync`): a success activates even a canceled grant. False when the recharge goes ahead.
 */
export async function cancelRechargeTurnedOff(tx: Queryable, claim: ClaimedCall): Promise<boolean> {
  await lockWalletFunds(tx, claim.wallet_id);
  if (await rechargeStillOn(tx, claim.wallet_id)) return false;
  if (!(await finishStripeCall(tx, claim, { outcome: 'canceled', paymentIntent: null, error: 'auto_recharge_disabled' })))
    throw new LeaseLost(`stripe call ${claim.id}`);
  await markCanceled(tx, claim.grant_id);
  return true;
}

/** Whether the wallet's auto-recharge is (still) enabled. */
export async function rechargeStillOn(db: Queryable, walletId: string): Promise<boolean> {
  const result = await db.query<{ enabled: boolean }>('select enabled from auto_recharge where wallet_id = $1', [walletId]);
  return result.rows[0]?.enabled === true;
}
