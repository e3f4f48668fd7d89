import { NO_TENANT } from '../../db/distribution.js';
import type { Queryable } from '../../db/pool.js';

/**
 * What Tally keeps of Stripe's objects, each by Stripe's id: payments (one row per
 * payment intent that succeeded), refunds, disputes, customers. Written by the settle
 * step under the object's lock (lockStripeObject), so each effect commits once.
 */

/**
 * A transaction-level lock on one Stripe object (a payment intent, a refund, a dispute),
 * taken before its wallet's lock: two events about one object apply one after the other,
 * and the second sees what the first committed.
 */
export async function lockStripeObject(tx: Queryable, id: string): Promise<void> {
  await tx.query({ name: 'lock_stripe_object', text: `select pg_advisory_xact_lock(hashtextextended('stripe:' || $1, 0))`, values: [id] });
}

export interface PaymentRow {
  payment_intent: string;
  outcome: 'activated' | 'mismatch' | 'no_grant';
  grant_id: string | null;
  tenant_id: string | null;
  wallet_id: string | null;
  charge_id: string | null;
  amount_minor: bigint;
  currency: string;
  detail: string | null;
}

export async function findPayment(db: Queryable, by: { paymentIntent: string } | { charge: string }): Promise<PaymentRow | null> {
  const result = await db.query<PaymentRow>(
    `select * from stripe_payments where ${'paymentIntent' in by ? 'payment_intent = $1' : 'charge_id = $1'}`,
    ['paymentIntent' in by ? by.paymentIntent : by.charge],
  );
  return result.rows[0] ?? null;
}

/** A payment no grant of ours claims is kept under NO_TENANT (stripe_payments is distributed by tenant). */
export async function insertPayment(tx: Queryable, row: PaymentRow): Promise<void> {
  await tx.query(
    `insert into stripe_payments (payment_intent, outcome, grant_id, tenant_id, wallet_id, charge_id, amount_minor, currency, detail)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      row.payment_intent,
      row.outcome,
      row.grant_id,
      row.tenant_id ?? NO_TENANT,
      row.wallet_id,
      row.charge_id,
      row.amount_minor.toString(),
      row.currency,
      row.detail,
    ],
  );
}

/** A payment's record moved to the grant that holds its money (the repair of payment_not_credited). */
export async function repointPayment(
  tx: Queryable,
  paymentIntent: string,
  to: { outcome: PaymentRow['outcome']; grantId: string; detail: string },
): Promise<void> {
  await tx.query('update stripe_payments set outcome = $2, grant_id = $3, detail = $4 where payment_intent = $1', [
    paymentIntent,
    to.outcome,
    to.grantId,
    to.detail,
  ]);
}

/** The charge of a payment, learnt from a later event (checkout.session.completed carries none). */
export async function setPaymentCharge(tx: Queryable, paymentIntent: string, charge: string): Promise<void> {
  await tx.query('update stripe_payments set charge_id = $2 where payment_intent = $1 and charge_id is null', [paymentIntent, charge]);
}

export interface RefundRow {
  refund_id: string;
  payment_intent: string;
  grant_id: string;
  /** the grant's tenant */
  tenant_id: string;
  amount_minor: bigint;
  status: string;
  posted: boolean;
  reversed: boolean;
  /** why it posts nothing (its currency is not its payment's); null when it applies */
  mismatch?: string | null;
}

export async function findRefund(db: Queryable, refundId: string): Promise<RefundRow | null> {
  const result = await db.query<RefundRow>('select * from stripe_refunds where refund_id = $1', [refundId]);
  return result.rows[0] ?? null;
}

export async function saveRefund(tx: Queryable, row: RefundRow): Promise<void> {
  await tx.query(
    `insert into stripe_refunds (refund_id, payment_intent, grant_id, amount_minor, status, posted, reversed, tenant_id, mismatch)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     on conflict on constraint stripe_refunds_pkey do update
       set status = excluded.status, posted = excluded.posted, reversed = excluded.reversed, mismatch = excluded.mismatch, updated_at = now()`,
    [
      row.refund_id,
      row.payment_intent,
      row.grant_id,
      row.amount_minor.toString(),
      row.status,
      row.posted,
      row.reversed,
      row.tenant_id,
      row.mismatch ?? null,
    ],
  );
}

export interface DisputeRow {
  dispute_id: string;
  payment_intent: string;
  grant_id: string;
  /** the grant's tenant */
  tenant_id: string;
  amount_minor: bigint;
  status: string;
  closed: boolean;
  /** why it changes nothing (its currency is not its payment's); null when it applies */
  mismatch?: string | null;
}

export async function findDispute(db: Queryable, disputeId: string): Promise<DisputeRow | null> {
  const result = await db.query<DisputeRow>('select * from stripe_disputes where dispute_id = $1', [disputeId]);
  return result.rows[0] ?? null;
}

export async function saveDispute(tx: Queryable, row: DisputeRow): Promise<void> {
  await tx.query(
    `insert into stripe_disputes (dispute_id, payment_intent, grant_id, amount_minor, status, closed, tenant_id, mismatch)
     values ($1, $2, $3, $4, $5, $6, $7, $8)
     on conflict on constraint stripe_disputes_pkey do update
       set status = excluded.status, closed = excluded.closed, mismatch = excluded.mismatch, updated_at = now()`,
    [
      row.dispute_id,
      row.payment_intent,
      row.grant_id,
      row.amount_minor.toString(),
      row.status,
      row.closed,
      row.tenant_id,
      row.mismatch ?? null,
    ],
  );
}

/** Whether another dispute of the grant is still open (its grant stays frozen). */
export async function otherOpenDispute(db: Queryable, grantId: string, disputeId: string): Promise<boolean> {
  const result = await db.query(
    'select 1 from stripe_disputes where grant_id = $1 and dispute_id <> $2 and not closed and mismatch is null',
    [grantId, disputeId],
  );
  return (result.rowCount ?? 0) > 0;
}

/**
 * Adds Stripe's ids to a grant's `payment` (its view's payment_intent, charge,
 * checkout_session, refunds, dispute); a refund id is listed once.
 */
export async function notePaymentIds(
  tx: Queryable,
  grantId: string,
  ids: { payment_intent?: string; charge?: string; checkout_session?: string; dispute?: string; refund?: string },
): Promise<void> {
  const { refund, ...scalars } = ids;
  const set = Object.fromEntries(Object.entries(scalars).filter(([, v]) => v !== undefined && v !== null));
  await tx.query(
    `update grants set payment = (coalesce(payment, '{}'::jsonb) || $2::jsonb)
        || case when $3::text is null or coalesce(payment->'refunds', '[]'::jsonb) @> to_jsonb(array[$3::text]) then '{}'::jsonb
                else jsonb_build_object('refunds', coalesce(payment->'refunds', '[]'::jsonb) || to_jsonb(array[$3::text])) end
     where id = $1`,
    [grantId, JSON.stringify(set), refund ?? null],
  );
}

export interface CustomerRow {
  tenant_id: string;
  livemode: boolean;
  key_account: string;
  customer_id: string;
  payment_method: string | null;
}

/** Whose customers: the tenant's, in the key's mode, of the key's account (migration 0030). */
export interface CustomerScope {
  tenantId: string;
  livemode: boolean;
  keyAccount: string;
}

export async function findCustomer(db: Queryable, scope: CustomerScope): Promise<CustomerRow | null> {
  const result = await db.query<CustomerRow>('select * from stripe_customers where tenant_id = $1 and livemode = $2 and key_account = $3', [
    scope.tenantId,
    scope.livemode,
    scope.keyAccount,
  ]);
  return result.rows[0] ?? null;
}

/** The tenant's customer, once: a second insert (a concurrent first checkout) keeps the first. */
export async function saveCustomer(db: Queryable, scope: CustomerScope, customerId: string): Promise<CustomerRow> {
  await db.query(
    `insert into stripe_customers (tenant_id, livemode, key_account, customer_id) values ($1, $2, $3, $4)
     on conflict on constraint stripe_customers_pkey do nothing`,
    [scope.tenantId, scope.livemode, scope.keyAccount, customerId],
  );
  return (await findCustomer(db, scope))!;
}

/** The payment method of a successful checkout charges later recharges (the latest one wins). */
export async function notePaymentMethod(
  tx: Queryable,
  customerId: string,
  paymentMethod: string,
  createdUnix: number | null,
): Promise<void> {
  await tx.query(
    `update stripe_customers set payment_method = $2, payment_method_at = coalesce(to_timestamp($3), now())
     where customer_id = $1 and (payment_method_at is null or payment_method_at <= coalesce(to_timestamp($3), now()))`,
    [customerId, paymentMethod, createdUnix],
  );
}
