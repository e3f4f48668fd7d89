import type { Queryable } from '../../db/pool.js';
import { newId } from '../../ids.js';
import type { Micros } from '../../money/index.js';
import { insertGrant } from '../grants.js';
import { announceGrantCreated } from '../grant-announce.js';
import type { Posting } from '../posting/index.js';
import type { RechargeParams } from './calls-table.js';
import { stripeCurrency, stripeAmount } from './minor-units.js';
import { decideRecharge, type RechargeDecision } from './recharge-decision.js';

/**
 * Auto-recharge: its settings, and the decision made by the posting that takes a
 * wallet's `available` below its threshold (the posting writer, apply-postings.ts, calls
 * considerRecharge under the wallet's lock, in the posting's transaction). Two postings of
 * one wallet are serialised by that lock, and the second sees the first's recharge in
 * flight: one recharge, not two. The charge itself is an outbox row (stripe_calls)
 * called after commit by the payments worker with the grant's Idempotency-Key.
 */

export interface AutoRecharge {
  wallet_id: string;
  tenant_id: string;
  enabled: boolean;
  threshold: bigint;
  target: bigint;
  monthly_limit: bigint | null;
  consecutive_failures: number;
  disabled_reason: string | null;
  in_flight: boolean;
  /** why a recharge due now could not be made (null: it could, or auto-recharge is off) */
  blocked_reason: RechargeBlocked | null;
}

/**
 * What stops an enabled auto-recharge from charging: Stripe not configured, no card
 * learnt from a successful checkout yet, or this month's limit leaving less than Stripe's
 * minimum charge. Shown on the view so nobody waits for a charge that cannot happen.
 */
export type RechargeBlocked = 'payments_not_configured' | 'no_payment_method' | 'monthly_limit';

interface AutoRechargeRow extends Omit<AutoRecharge, 'blocked_reason'> {
  currency: string;
  configured: boolean;
  chargeable: boolean;
  month_total: bigint;
}

export async function readAutoRecharge(db: Queryable, walletId: string): Promise<AutoRecharge | null> {
  const result = await db.query<AutoRechargeRow>(
    `select r.*, a.currency,
        exists (select 1 from grants g where g.wallet_id = r.wallet_id and g.source = 'auto_recharge'
                and g.activated_at is null and g.canceled_at is null and g.voided_at is null) as in_flight,
        s.processor is not null as configured,
        (c.customer_id is not null and c.payment_method is not null) as chargeable,
        (select coalesce(sum(g.amount), 0) from grants g where g.tenant_id = r.tenant_id and g.wallet_id = r.wallet_id and g.source = 'auto_recharge'
          and g.canceled_at is null and g.created_at >= date_trunc('month', now() at time zone 'UTC') at time zone 'UTC') as month_total
     from auto_recharge r
     join accounts a on a.id = r.wallet_id and a.tenant_id = r.tenant_id
     left join payment_settings s on s.processor = 'stripe'
     left join stripe_customers c on c.tenant_id = r.tenant_id and c.livemode = s.livemode and c.key_account = s.key_account
     where r.wallet_id = $1`,
    [walletId],
  );
  const row = result.rows[0];
  if (!row) return null;
  const { currency, configured, chargeable, month_total, ...settings } = row;
  return { ...settings, blocked_reason: blockedReason(row) };
}

/** Asks the one recharge decision what it would answer if `available` fell below the threshold now. */
function blockedReason(row: AutoRechargeRow): RechargeBlocked | null {
  if (!row.enabled) return null;
  if (!row.configured) return 'payments_not_configured';
  const decision = decideRecharge({
    enabled: true,
    threshold: BigInt(row.threshold),
    target: BigInt(row.target),
    monthlyLimit: row.monthly_limit === null ? null : BigInt(row.monthly_limit),
    currency: row.currency,
    available: BigInt(row.threshold) - 1n,
    inFlight: false,
    monthTotal: BigInt(row.month_total),
    chargeable: row.chargeable,
  });
  return decision.kind === 'none' && (decision.reason === 'no_payment_method' || decision.reason === 'monthly_limit')
    ? decision.reason
    : null;
}

/** After this many declined recharges in a row, auto-recharge turns itself off. */
export const MAX_CONSECUTIVE_FAILURES = 3;

/** PUT: the settings as given; enabling resets the failure count and the reason it was disabled. */
export async function saveAutoRecharge(
  db: Queryable,
  wallet: { id: string; tenantId: string },
  settings: { enabled: boolean; threshold: Micros; target: Micros; monthlyLimit: Micros | null },
): Promise<AutoRecharge> {
  await db.query(
    `insert into auto_recharge (wallet_id, tenant_id, enabled, threshold, target, monthly_limit)
     values ($1, $2, $3, $4, $5, $6)
     on conflict on constraint auto_recharge_pkey do update
       set enabled = excluded.enabled, threshold = excluded.threshold, target = excluded.target,
           monthly_limit = excluded.monthly_limit,
           consecutive_failures = case when excluded.enabled then 0 else auto_recharge.consecutive_failures end,
           disabled_reason = case when excluded.enabled then null else auto_recharge.disabled_reason end,
           updated_at = now()`,
    [
      wallet.id,
      wallet.tenantId,
      settings.enabled,
      settings.threshold.toString(),
      settings.target.toString(),
      settings.monthlyLimit === null ? null : settings.monthlyLimit.toString(),
    ],
  );
  return (await readAutoRecharge(db, wallet.id))!;
}

interface Situation {
  enabled: boolean;
  threshold: bigint;
  target: bigint;
  monthly_limit: bigint | null;
  in_flight: boolean;
  month_total: bigint;
}

interface RechargeCustomer {
  customer_id: string | null;
  payment_method: string | null;
}

/**
 * The tenant's customer at the account of the key in use, read only once a wallet is
 * below its threshold: the hot path (every posting that lowers `available`) reads
 * auto_recharge alone.
 */
async function rechargeCustomer(tx: Queryable, tenantId: string): Promise<RechargeCustomer> {
  const result = await tx.query<RechargeCustomer>({
    name: 'recharge_customer',
    text: `select c.customer_id, c.payment_method
      from payment_settings s
      join stripe_customers c on c.tenant_id = $1 and c.livemode = s.livemode and c.key_account = s.key_account
      where s.processor = 'stripe'`,
    values: [tenantId],
  });
  return result.rows[0] ?? { customer_id: null, payment_method: null };
}

/** A recharge decided: its grant (awaiting payment) and its call, both written. */
export interface RechargeStarted {
  grantId: string;
  callId: string;
  amount: Micros;
}

/**
 * Called by every posting that lowered `available`, with the wallet's totals after it,
 * under the wallet's lock. A wallet without auto-recharge costs one index lookup.
 */
export async function considerRecharge(
  tx: Queryable,
  wallet: { walletId: string; tenantId: string; currency: string; plantedRechargeInFlight?: boolean },
  available: Micros,
): Promise<RechargeStarted | null> {
  const result = await tx.query<Situation>({
    name: 'recharge_situation',
    text: `select r.enabled, r.threshold, r.target, r.monthly_limit,
        exists (select 1 from grants g where g.tenant_id = r.tenant_id and g.wallet_id = r.wallet_id and g.source = 'auto_recharge'
                and g.activated_at is null and g.canceled_at is null and g.voided_at is null) as in_flight,
        (select coalesce(sum(g.amount), 0) from grants g where g.tenant_id = r.tenant_id and g.wallet_id = r.wallet_id and g.source = 'auto_recharge'
          and g.canceled_at is null and g.created_at >= date_trunc('month', now() at time zone 'UTC') at time zone 'UTC') as month_total
      from auto_recharge r
      where r.tenant_id = $3 and r.wallet_id = $1 and r.enabled and $2::bigint < r.threshold`,
    values: [wallet.walletId, available.toString(), wallet.tenantId],
  });
  const situation = result.rows[0];
  if (!situation) return null;
  const row = { ...situation, ...(await rechargeCustomer(tx, wallet.tenantId)) };
  const decision: RechargeDecision = decideRecharge({
    enabled: row.enabled,
    threshold: BigInt(row.threshold),
    target: BigInt(row.target),
    monthlyLimit: row.monthly_limit === null ? null : BigInt(row.monthly_limit),
    currency: wallet.currency,
    available,
    inFlight: wallet.plantedRechargeInFlight ?? row.in_flight,
    monthTotal: BigInt(row.month_total),
    chargeable: row.customer_id !== null && row.payment_method !== null,
  });
  if (decision.kind !== 'recharge') return null;
  const callId = newId();
  const grant = await insertGrant(tx, {
    tenantId: wallet.tenantId,
    walletId: wallet.walletId,
    currency: wallet.currency,
    category: 'paid',
    priority: 50,
    amount: decision.amount,
    source: 'auto_recharge',
    grantKey: `auto_recharge:${callId}`,
    reference: 'auto-recharge',
    awaitingPayment: true,
    payment: {},
  });
  await announceGrantCreated(tx, grant!.id, false);
  const params: RechargeParams = {
    amount: stripeAmount(decision.amountMinor),
    currency: stripeCurrency(wallet.currency),
    customer: row.customer_id!,
    payment_method: row.payment_method!,
    off_session: true,
    confirm: true,
    metadata: { tally_grant_id: grant!.id, tally_wallet_id: wallet.walletId },
  };
  await tx.query(`insert into stripe_calls (id, grant_id, tenant_id, wallet_id, idempotency_key, params) values ($1, $2, $3, $4, $5, $6)`, [
    callId,
    grant!.id,
    wallet.tenantId,
    wallet.walletId,
    rechargeIdempotencyKey(grant!.id),
    JSON.stringify(params),
  ]);
  return { grantId: grant!.id, callId, amount: decision.amount };
}

/**
 * Whether a posting lowers `available`: money leaving the wallet (a reservation, a charge,
 * a refund to the payer, an expiry, a void) — not a capture or a release, which move what
 * was already held, nor a debt repayment, which stays inside the wallet.
 */
export function lowersAvailable(postings: readonly Posting[]): boolean {
  const inside = (party: Posting['from']) => party === 'debt' || typeof party === 'object';
  return postings.some((p) => (p.flags === 'pending' || p.flags === 'posted') && inside(p.from) && !inside(p.to));
}

/**
 * The one call every writer of a wallet's money makes after its posting, under the
 * wallet's lock: when the posting lowered `available`, auto-recharge is considered with
 * the wallet's `available` after it.
 */
export async function rechargeAfterPosting(
  tx: Queryable,
  wallet: { walletId: string; tenantId: string; currency: string; plantedRechargeInFlight?: boolean },
  postings: readonly Posting[],
  available: Micros,
): Promise<RechargeStarted | null> {
  if (!lowersAvailable(postings)) return null;
  return considerRecharge(tx, wallet, available);
}

/** The Idempotency-Key of a recharge's payment intent: the grant's, so one grant is charged once. */
export function rechargeIdempotencyKey(grantId: string): string {
  return `tally-recharge-${grantId}`;
}

/**
 * A recharge's payment failed (a decline, requires_action, payment_intent.payment_failed),
 * counted once by the caller (after the grant's cancel changed it): the failure count
 * grows, and the third in a row turns auto-recharge off. Returns true when this one
 * disabled it (auto_recharge.disabled is sent once, by the caller, in the same transaction).
 */
export async function countRechargeFailure(
  tx: Queryable,
  walletId: string,
  reason: string,
): Promise<{ failures: number; disabled: boolean }> {
  const before = await tx.query<{ enabled: boolean }>('select enabled from auto_recharge where wallet_id = $1 for update', [walletId]);
  if (!before.rows[0]) return { failures: 0, disabled: false };
  const result = await tx.query<{ consecutive_failures: number; enabled: boolean }>(
    `update auto_recharge set consecutive_failures = consecutive_failures + 1,
        enabled = case when consecutive_failures + 1 >= $2 then false else enabled end,
        disabled_reason = case when enabled and consecutive_failures + 1 >= $2 then $3 else disabled_reason end,
        updated_at = now()
     where wallet_id = $1
     returning consecutive_failures, enabled`,
    [walletId, MAX_CONSECUTIVE_FAILURES, reason],
  );
  const row = result.rows[0]!;
  return { failures: row.consecutive_failures, disabled: before.rows[0].enabled && !row.enabled };
}

/** A recharge succeeded: the failure count starts again. */
export async function resetRechargeFailures(tx: Queryable, walletId: string): Promise<void> {
  await tx.query(
    'update auto_recharge set consecutive_failures = 0, updated_at = now() where wallet_id = $1 and consecutive_failures <> 0',
    [walletId],
  );
}
