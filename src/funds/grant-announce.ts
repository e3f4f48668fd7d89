import type { Queryable } from '../db/pool.js';
import { formatAmount } from '../money/index.js';
import { enqueueMessages, type NewMessage } from '../outbound/enqueue.js';
import { readGrant } from './grant-reads.js';

/**
 * grant.created for a grant just inserted, as its read model shows it (status and
 * instants at this transaction's clock); with `activated`, grant.activated beside it.
 */
export async function announceGrantCreated(tx: Queryable, grantId: string, activated: boolean): Promise<void> {
  const grant = (await readGrant(tx, grantId))!;
  const base = { grant_id: grant.id, wallet_id: grant.wallet_id, currency: grant.currency, category: grant.category };
  const messages: NewMessage[] = [
    {
      tenantId: grant.tenant_id,
      type: 'grant.created',
      data: {
        ...base,
        amount: formatAmount(grant.amount),
        priority: grant.priority,
        source: grant.source,
        status: grant.status,
        effective_at: grant.effective_at,
        expires_at: grant.expires_at,
        reference: grant.reference,
      },
    },
  ];
  if (activated)
    messages.push({ tenantId: grant.tenant_id, type: 'grant.activated', data: { ...base, amount: formatAmount(grant.amount) } });
  await enqueueMessages(tx, messages);
}
