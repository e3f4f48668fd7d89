import { Type, type TSchema } from '@sinclair/typebox';
import { GRANT_STATUSES, type GrantRecord } from '../funds/index.js';
import { formatAmount } from '../money/index.js';
import { AmountString, Metadata } from './schemas.js';
import { literals } from './list-views.js';

/** A grant as clients see it (CONTRACT.md "Credit grants"): the schema and the function that fills it, side by side. */

const Instant = Type.String({ format: 'date-time', description: 'RFC 3339, UTC, to the microsecond' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const GRANT_CATEGORIES = ['paid', 'promotional'] as const;
export const GRANT_SOURCES = ['credit', 'grant', 'stripe_checkout', 'stripe_payment', 'auto_recharge'] as const;

export const GrantView = Type.Object(
  {
    id: Type.String(),
    wallet_id: Type.String(),
    category: literals(GRANT_CATEGORIES),
    priority: Type.Integer({ minimum: 0, maximum: 100, description: 'lowest drawn first' }),
    amount: AmountString,
    remaining: AmountString,
    held: AmountString,
    status: literals(GRANT_STATUSES),
    effective_at: Instant,
    expires_at: Nullable(Instant),
    expired_amount: AmountString,
    voided_amount: AmountString,
    source: literals(GRANT_SOURCES),
    payment: Nullable(
      Type.Object(
        {
          payment_intent: Nullable(Type.String()),
          charge: Nullable(Type.String()),
          checkout_session: Nullable(Type.String()),
          dispute: Nullable(Type.String()),
          refunds: Type.Array(Type.String(), { description: "the processor's refund ids (re_…)" }),
        },
        { description: "the payment processor's ids for the payment that brings this grant" },
      ),
    ),
    reference: Nullable(Type.String()),
    metadata: Metadata,
    created_at: Instant,
  },
  {
    description:
      'a sub-account of a wallet: `remaining` is what it still holds for the wallet, held part included; `held` the part open holds reserve; a scheduled, awaiting or canceled grant holds 0 (`amount` says what it will bring)',
  },
);

/** The payment's ids, whatever else the processor's record holds. */
function paymentView(payment: Record<string, unknown> | null) {
  if (payment === null) return null;
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  const refunds = Array.isArray(payment.refunds) ? payment.refunds : [];
  return {
    payment_intent: text(payment.payment_intent),
    charge: text(payment.charge),
    checkout_session: text(payment.checkout_session),
    dispute: text(payment.dispute),
    refunds: refunds.flatMap((r: unknown) => {
      const id = typeof r === 'string' ? r : text((r as { id?: unknown } | null)?.id);
      return id === null ? [] : [id];
    }),
  };
}

export function grantView(grant: GrantRecord) {
  return {
    id: grant.id,
    wallet_id: grant.wallet_id,
    category: grant.category,
    priority: grant.priority,
    amount: formatAmount(grant.amount),
    remaining: formatAmount(grant.remaining),
    held: formatAmount(grant.held),
    status: grant.status,
    effective_at: grant.effective_at,
    expires_at: grant.expires_at,
    expired_amount: formatAmount(grant.expired_amount),
    voided_amount: formatAmount(grant.voided_amount),
    source: grant.source,
    payment: paymentView(grant.payment),
    reference: grant.reference,
    metadata: grant.metadata,
    created_at: grant.created_at,
  };
}
