import type { Queryable } from '../db/pool.js';
import { NO_FUNDING, post, type Grant, type Micros } from './posting/index.js';

/**
 * What the expiry sweep would do over the next hours (`tally grants expire --dry-run`): the
 * grants holding money whose expiry falls due by then — or fell due and has not posted —
 * each with what would lapse if it expired with what it holds now. The amount is the
 * posting module's own answer to the expiry (its unheld remaining), asked of the grant as
 * stored; nothing is written. A read model: the sweep itself is duties/grant-duties.ts.
 */

export interface ExpiringGrant {
  id: string;
  walletId: string;
  tenantId: string;
  currency: string;
  expiresAt: Date;
  remaining: Micros;
  held: Micros;
  /** what its expiry would post to breakage: the unheld remaining */
  lapsing: Micros;
}

/** Grants one statement reads; the list walks on from the last one. */
const PAGE = 1000;

interface Row {
  id: string;
  wallet_id: string;
  tenant_id: string;
  currency: string;
  expires_at: Date;
  grant: {
    category: Grant['category'];
    priority: number;
    effective_at: string;
    expires_at: string;
    created_at: string;
    remaining: string;
    held: string;
    voided: boolean;
    disputed: boolean;
    expired_amount: string;
    voided_amount: string;
  };
}

const MICROS = (column: string) => `(extract(epoch from ${column}) * 1000000)::bigint::text`;

/**
 * The activated grants whose expires_at is before `now() + hours` and whose expiry has not
 * posted (grants_expiry_due_idx), soonest first; `until` is that instant.
 */
export async function listExpiringGrants(db: Queryable, hours: number): Promise<{ until: Date; grants: ExpiringGrant[] }> {
  // One instant for every page, read from the database's clock as the sweep reads it.
  const until = (await db.query<{ until: Date }>('select now() + make_interval(hours => $1) as until', [hours])).rows[0]!.until;
  const grants: ExpiringGrant[] = [];
  let after: { micros: string; id: string } | null = null;
  for (;;) {
    const result: { rows: (Row & { due_micros: string })[] } = await db.query({
      name: 'list_expiring_grants',
      text: `select g.id, g.wallet_id, g.tenant_id, g.currency, g.expires_at, ${MICROS('g.expires_at')} as due_micros,
          jsonb_build_object('category', g.category, 'priority', g.priority, 'effective_at', ${MICROS('g.effective_at')},
            'expires_at', ${MICROS('g.expires_at')}, 'created_at', ${MICROS('g.created_at')}, 'remaining', g.remaining::text,
            'held', g.held::text, 'voided', g.voided_at is not null, 'disputed', g.disputed,
            'expired_amount', g.expired_amount::text, 'voided_amount', g.voided_amount::text) as grant
        from grants g
        where g.expires_at is not null and g.expiry_posted_at is null and g.activated_at is not null and g.expires_at < $1
          and ($2::bigint is null or (g.expires_at, g.id) > (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::uuid))
        order by g.expires_at, g.id limit ${PAGE}`,
      values: [until, after?.micros ?? null, after?.id ?? null],
    });
    for (const row of result.rows) grants.push(expiring(row));
    if (result.rows.length < PAGE) return { until, grants };
    const last = result.rows[result.rows.length - 1]!;
    after = { micros: last.due_micros, id: last.id };
  }
}

function expiring(row: Row): ExpiringGrant {
  const g = row.grant;
  const grant: Grant = {
    id: row.id,
    category: g.category,
    priority: g.priority,
    effectiveAt: BigInt(g.effective_at),
    expiresAt: BigInt(g.expires_at),
    createdAt: BigInt(g.created_at),
    remaining: BigInt(g.remaining),
    held: BigInt(g.held),
    voided: g.voided,
    disputed: g.disputed,
    expiryPosted: false,
    expiredAmount: BigInt(g.expired_amount),
    voidedAmount: BigInt(g.voided_amount),
  };
  // The expiry as the sweep will ask for it, at the grant's own instant.
  const expiry = post({ grants: [grant], debt: 0n }, NO_FUNDING, { kind: 'expire', grantId: grant.id, now: grant.expiresAt! });
  const lapsing = expiry.ok ? expiry.wallet.grants[0]!.expiredAmount - grant.expiredAmount : 0n;
  return {
    id: row.id,
    walletId: row.wallet_id,
    tenantId: row.tenant_id,
    currency: row.currency,
    expiresAt: row.expires_at,
    remaining: grant.remaining,
    held: grant.held,
    lapsing,
  };
}

/** The lapsing amounts per currency, in the order the currencies first appear. */
export function lapsingByCurrency(grants: readonly Pick<ExpiringGrant, 'currency' | 'lapsing'>[]): Map<string, Micros> {
  const totals = new Map<string, Micros>();
  for (const g of grants) totals.set(g.currency, (totals.get(g.currency) ?? 0n) + g.lapsing);
  return totals;
}
