import type { GrantRow } from '../grants.js';
import { formatAmount } from '../../money/index.js';
import type { NewMessage } from '../../outbound/enqueue.js';

/** A payment's message to its tenant (outbound/events.ts: payment.*), about its grant. */
export function paymentMessage(
  type: 'payment.succeeded' | 'payment.failed' | 'payment.refunded' | 'payment.disputed',
  grant: GrantRow,
  paymentIntent: string | null,
  extra: { amount?: bigint; reason?: string; refund_id?: string; status?: string; dispute_id?: string },
): NewMessage {
  const base = {
    grant_id: grant.id,
    wallet_id: grant.wallet_id,
    currency: grant.currency,
    source: grant.source,
    payment_intent: paymentIntent,
    amount: formatAmount(extra.amount ?? grant.amount),
  };
  switch (type) {
    case 'payment.succeeded':
      return { tenantId: grant.tenant_id, type, data: base };
    case 'payment.failed':
      return { tenantId: grant.tenant_id, type, data: { ...base, reason: extra.reason ?? 'failed' } };
    case 'payment.refunded':
      return { tenantId: grant.tenant_id, type, data: { ...base, refund_id: extra.refund_id!, status: extra.status! } };
    case 'payment.disputed':
      return { tenantId: grant.tenant_id, type, data: { ...base, dispute_id: extra.dispute_id!, status: extra.status! } };
  }
}
