import type { Queryable } from '../db/pool.js';
import { isExpiredAt, type Grant, type Instant, type Posting, type WalletFunds } from './posting/index.js';
import { formatAmount } from '../money/index.js';
import { enqueueMessages } from '../outbound/enqueue.js';

/**
 * The tenants' messages about grants (outbound/events.ts), each written by the writer of
 * its effect, in the effect's transaction: a grant's creation and activation
 * (grant-writes.ts, credit.ts), its expiry and void (grant-writes.ts), and the posting
 * that used it up (the posting writer, apply-postings.ts, from what the posting module
 * returned: no query unless a grant was depleted).
 */

/** Whose grant and where: what every grant message names. */
export interface GrantParty {
  tenantId: string;
  walletId: string;
  currency: string;
}

export { announceGrantCreated } from './grant-announce.js';

/** grant.activated for a grant whose money entered the wallet after its creation. */
export async function announceGrantActivated(
  tx: Queryable,
  party: GrantParty,
  grant: { id: string; category: Grant['category']; amount: bigint },
): Promise<void> {
  await enqueueMessages(tx, [
    {
      tenantId: party.tenantId,
      type: 'grant.activated',
      data: {
        grant_id: grant.id,
        wallet_id: party.walletId,
        currency: party.currency,
        category: grant.category,
        amount: formatAmount(grant.amount),
      },
    },
  ]);
}

/** grant.expired once its expiry posted, with what lapsed then. */
export async function announceGrantExpired(tx: Queryable, party: GrantParty, grant: Grant, lapsed: bigint): Promise<void> {
  await enqueueMessages(tx, [
    {
      tenantId: party.tenantId,
      type: 'grant.expired',
      data: {
        grant_id: grant.id,
        wallet_id: party.walletId,
        currency: party.currency,
        category: grant.category,
        expired_amount: formatAmount(lapsed),
      },
    },
  ]);
}

/** grant.voided, with what left the wallet then and the operator's note. */
export async function announceGrantVoided(
  tx: Queryable,
  party: GrantParty,
  grant: { id: string; category: Grant['category'] },
  voided: bigint,
  note: string,
): Promise<void> {
  await enqueueMessages(tx, [
    {
      tenantId: party.tenantId,
      type: 'grant.voided',
      data: {
        grant_id: grant.id,
        wallet_id: party.walletId,
        currency: party.currency,
        category: grant.category,
        voided_amount: formatAmount(voided),
        note,
      },
    },
  ]);
}

/**
 * The grants a posting used up: named by one of its postings, nothing remaining after it,
 * and neither voided nor expired at `now` (their remaining leaving is grant.voided's or
 * grant.expired's news, not a depletion).
 */
export function depletedGrants(after: WalletFunds, postings: readonly Posting[], now: Instant): Grant[] {
  const named = new Set<string>();
  for (const p of postings) for (const party of [p.from, p.to]) if (typeof party === 'object') named.add(party.grant);
  return after.grants.filter((g) => named.has(g.id) && g.remaining === 0n && !g.voided && !isExpiredAt(g, now));
}

/** grant.depleted for each grant the postings used up (nothing written when none was). */
export async function announceDepleted(
  tx: Queryable,
  party: GrantParty,
  after: WalletFunds,
  postings: readonly Posting[],
  now: Instant,
): Promise<void> {
  const depleted = depletedGrants(after, postings, now);
  if (depleted.length === 0) return;
  await enqueueMessages(
    tx,
    depleted.map((g) => ({
      tenantId: party.tenantId,
      type: 'grant.depleted' as const,
      data: { grant_id: g.id, wallet_id: party.walletId, currency: party.currency, category: g.category },
    })),
  );
}
