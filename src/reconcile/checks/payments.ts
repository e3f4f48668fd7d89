import { NO_TENANT } from '../../db/distribution.js';
import { amount, secondsSince, type Check } from './check.js';

/**
 * Payments through Stripe (CONTRACT.md "Payments (Stripe)"): what the payments worker
 * recorded but could not apply, and what is still waiting after it should be done.
 */

/** A Stripe event not applied this long after it was received is stuck. */
export const PAYMENT_EVENT_STUCK_SECONDS = 300;
/** A recharge still awaiting its payment this long after it was decided is unresolved. */
export const RECHARGE_UNRESOLVED_SECONDS = 3600;

/**
 * A payment whose amount or currency is not its grant's (the grant stays unpaid), or whose
 * money the wallet cannot hold (stripe_payments outcome mismatch); a refund or dispute in
 * another currency than its payment's (posted never).
 */
export const paymentMismatch: Check = {
  class: 'payment_mismatch',
  covers: 'stripe_payments',
  sql: `select p.payment_intent as key,
               jsonb_build_object('payment_intent', p.payment_intent, 'grant_id', p.grant_id, 'wallet_id', p.wallet_id, 'tenant_id', nullif(p.tenant_id, '${NO_TENANT}')) as objects,
               jsonb_build_object('paid_minor', p.amount_minor, 'paid_currency', p.currency,
                 'grant_amount', case when g.id is null then null else ${amount('g.amount')} end, 'grant_currency', g.currency,
                 'detail', p.detail, 'recorded_at', p.created_at) as detail
        from stripe_payments p left join grants g on g.id = p.grant_id and g.tenant_id = p.tenant_id
        where p.outcome = 'mismatch'
        union all
        select r.refund_id,
               jsonb_build_object('refund', r.refund_id, 'payment_intent', r.payment_intent, 'grant_id', r.grant_id, 'tenant_id', r.tenant_id),
               jsonb_build_object('refund_minor', r.amount_minor, 'status', r.status, 'detail', r.mismatch, 'recorded_at', r.updated_at)
        from stripe_refunds r where r.mismatch is not null
        union all
        select d.dispute_id,
               jsonb_build_object('dispute', d.dispute_id, 'payment_intent', d.payment_intent, 'grant_id', d.grant_id, 'tenant_id', d.tenant_id),
               jsonb_build_object('dispute_minor', d.amount_minor, 'status', d.status, 'detail', d.mismatch, 'recorded_at', d.updated_at)
        from stripe_disputes d where d.mismatch is not null`,
};

/**
 * A payment recorded as applied whose grant never took its money: a grant voided while it
 * awaited payment, before the void was refused (Tally ≤ the fix of issue 33), had its payment
 * recorded `activated` and credited nothing. `--repair` credits it on a paid grant of its
 * own, keyed by the payment intent (funds/payments/payment-settle.ts creditPaymentGrant).
 */
export const paymentNotCredited: Check = {
  class: 'payment_not_credited',
  covers: 'stripe_payments',
  sql: `select p.payment_intent as key,
               jsonb_build_object('payment_intent', p.payment_intent, 'grant_id', p.grant_id, 'wallet_id', p.wallet_id, 'tenant_id', p.tenant_id) as objects,
               jsonb_build_object('paid_minor', p.amount_minor, 'paid_currency', p.currency, 'grant_amount', ${amount('g.amount')},
                 'grant_voided_at', g.voided_at, 'recorded_at', p.created_at) as detail
        from stripe_payments p join grants g on g.id = p.grant_id and g.tenant_id = p.tenant_id
        where p.outcome = 'activated' and g.activated_at is null`,
};

/**
 * A Stripe event pending, claimed or dead for over 5 minutes: waiting for an object Tally
 * has not seen (its reason says which), failing (last_error), or dead-lettered.
 */
export const paymentEventStuck: Check = {
  class: 'payment_event_stuck',
  covers: 'stripe_events',
  sql: `select e.id as key,
               jsonb_build_object('event_id', e.id, 'type', e.type, 'object_id', e.object_id) as objects,
               jsonb_build_object('state', e.state, 'reason', e.reason, 'attempts', e.attempts, 'last_error', e.last_error,
                 'received_at', e.received_at, 'waiting_for_seconds', ${secondsSince('coalesce(e.waiting_since, e.received_at)')}) as detail
        from stripe_events e
        where e.state in ('pending', 'processing', 'dead')
          and e.received_at < now() - make_interval(secs => ${PAYMENT_EVENT_STUCK_SECONDS})`,
};

/** A recharge in flight (its grant awaiting payment) for over an hour, with its call to Stripe. */
export const rechargeUnresolved: Check = {
  class: 'recharge_unresolved',
  covers: 'grants',
  sql: `select g.id::text as key,
               jsonb_build_object('grant_id', g.id, 'wallet_id', g.wallet_id, 'tenant_id', g.tenant_id, 'payment_intent', c.payment_intent) as objects,
               jsonb_build_object('amount', ${amount('g.amount')}, 'currency', g.currency, 'decided_at', g.created_at,
                 'in_flight_for_seconds', ${secondsSince('g.created_at')},
                 'call_state', c.state, 'call_outcome', c.outcome, 'call_attempts', c.attempts, 'last_error', c.last_error) as detail
        from grants g left join stripe_calls c on c.grant_id = g.id
        where g.source = 'auto_recharge' and g.activated_at is null and g.canceled_at is null and g.voided_at is null
          and g.created_at < now() - make_interval(secs => ${RECHARGE_UNRESOLVED_SECONDS})`,
};
