import type { Queryable } from '../db/pool.js';
import { newId } from '../ids.js';
import type { Grant, GrantCategory } from './posting/index.js';

export type GrantSource = 'credit' | 'grant' | 'stripe_checkout' | 'stripe_payment' | 'auto_recharge';

export interface NewGrant {
  tenantId: string;
  walletId: string;
  currency: string;
  category: GrantCategory;
  priority: number;
  amount: bigint;
  source: GrantSource;
  /** the key of the movement that creates it: a second grant under one key is refused by grants_grant_key_key */
  grantKey: string;
  /** default: now (the database's clock) */
  effectiveAt?: string | null;
  expiresAt?: string | null;
  reference?: string | null;
  metadata?: Record<string, string>;
  /** a grant a payment will bring (checkout, auto-recharge): inserted unactivated, activated when the payment succeeds */
  awaitingPayment?: boolean;
  payment?: Record<string, unknown> | null;
}

/**
 * Inserts a grant holding nothing yet: its money enters with the posting that activates it
 * (the caller's, in the same transaction, under the wallet's lock). Effective now unless
 * told otherwise; `activated_at` is set here when it is effective at creation, and the
 * posting then moves its remaining. Returns it as the posting module sees it, or null
 * when its expiry is not after its effective instant or is already past (by the
 * database's clock, to the microsecond).
 */
export async function insertGrant(tx: Queryable, grant: NewGrant): Promise<(Grant & { activated: boolean }) | null> {
  const result = await tx.query<{ id: string; effective_at: string; expires_at: string | null; created_at: string; activated: boolean }>({
    name: 'insert_grant',
    // one reading of the clock: a second one would put "effective" after "now"
    text: `with clock as (select clock_timestamp() as now),
     at as (select now, coalesce($10::timestamptz, now) as effective from clock)
     insert into grants (id, tenant_id, wallet_id, currency, category, priority, amount, source, grant_key,
                         effective_at, expires_at, activated_at, reference, metadata, created_at, payment)
     select $1, $2, $3, $4, $5, $6, $7, $8, $9, at.effective, $11, case when at.effective <= at.now and not $14 then at.now end, $12, $13, at.now, $15
     from at
     -- an expiry that is not after the grant takes effect, or already past, inserts nothing
     where $11::timestamptz is null or ($11::timestamptz > at.effective and $11::timestamptz > at.now)
     returning id, activated_at is not null as activated, (extract(epoch from effective_at) * 1000000)::bigint::text as effective_at,
               (extract(epoch from expires_at) * 1000000)::bigint::text as expires_at,
               (extract(epoch from created_at) * 1000000)::bigint::text as created_at`,
    values: [
      newId(),
      grant.tenantId,
      grant.walletId,
      grant.currency,
      grant.category,
      grant.priority,
      grant.amount.toString(),
      grant.source,
      grant.grantKey,
      grant.effectiveAt ?? null,
      grant.expiresAt ?? null,
      grant.reference ?? null,
      JSON.stringify(grant.metadata ?? {}),
      grant.awaitingPayment ?? false,
      grant.payment ? JSON.stringify(grant.payment) : null,
    ],
  });
  const row = result.rows[0];
  if (!row) return null;
  return {
    activated: row.activated,
    id: row.id,
    category: grant.category,
    priority: grant.priority,
    effectiveAt: BigInt(row.effective_at),
    expiresAt: row.expires_at === null ? null : BigInt(row.expires_at),
    createdAt: BigInt(row.created_at),
    remaining: 0n,
    held: 0n,
    voided: false,
    disputed: false,
    expiryPosted: false,
    expiredAmount: 0n,
    voidedAmount: 0n,
  };
}

export interface GrantRow {
  id: string;
  tenant_id: string;
  wallet_id: string;
  currency: string;
  category: GrantCategory;
  priority: number;
  amount: bigint;
  remaining: bigint;
  held: bigint;
  source: GrantSource;
  grant_key: string;
  effective_at: Date;
  expires_at: Date | null;
  activated_at: Date | null;
  expiry_posted_at: Date | null;
  expired_amount: bigint;
  voided_at: Date | null;
  void_note: string | null;
  voided_amount: bigint;
  canceled_at: Date | null;
  disputed: boolean;
  payment: Record<string, unknown> | null;
  reference: string | null;
  metadata: Record<string, string>;
  created_at: Date;
}

/** A grant by id, or by the key that created it; with `tenantId`, only that tenant's. */
export async function findGrant(
  db: Queryable,
  by: { id: string } | { grantKey: string },
  tenantId?: string | null,
): Promise<GrantRow | null> {
  const result = await db.query<GrantRow>(
    `select * from grants where ${'id' in by ? 'id = $1' : 'grant_key = $1'} and ($2::uuid is null or tenant_id = $2)`,
    ['id' in by ? by.id : by.grantKey, tenantId ?? null],
  );
  return result.rows[0] ?? null;
}

/** Marks a grant activated (a scheduled grant whose effective_at has come), under its wallet's lock. */
export async function markActivated(tx: Queryable, grantId: string): Promise<void> {
  await tx.query('update grants set activated_at = clock_timestamp() where id = $1 and activated_at is null', [grantId]);
}

/** Records who voided a grant and why (its amounts move with the posting, wallet-funds.ts). */
export async function recordVoid(tx: Queryable, grantId: string, note: string): Promise<void> {
  await tx.query('update grants set voided_at = coalesce(voided_at, clock_timestamp()), void_note = $2 where id = $1', [grantId, note]);
}

/** Cancels a grant awaiting payment (an expired or failed checkout, a declined recharge): it never brought money. */
export async function markCanceled(tx: Queryable, grantId: string): Promise<boolean> {
  const result = await tx.query(
    'update grants set canceled_at = clock_timestamp() where id = $1 and activated_at is null and canceled_at is null',
    [grantId],
  );
  return result.rowCount === 1;
}

/** An open dispute freezes the grant (it funds no new hold or charge); its close unfreezes it. */
export async function setDisputed(tx: Queryable, grantId: string, disputed: boolean): Promise<void> {
  await tx.query('update grants set disputed = $2 where id = $1', [grantId, disputed]);
}
