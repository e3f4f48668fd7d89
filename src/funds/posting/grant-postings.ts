import { planted } from '../../plants.js';
import { unheld } from './order.js';
import type { JobFunding, Micros, PostingResult, WalletFunds } from './types.js';
import { Working, min } from './working.js';

/**
 * A grant's money enters the wallet (a credit, a grant taking effect, a paid payment):
 * it pays the debt first, in the same posting.
 */
export function postActivation(
  wallet: WalletFunds,
  job: JobFunding,
  grantId: string,
  amount: Micros,
  entry: 'credit' | 'grant',
  now: bigint,
): PostingResult {
  const work = new Working(wallet, now);
  if (!work.has(grantId)) return { ok: false, refusal: { reason: 'unknown_grant', grantId } };
  work.move(entry, 'posted', 'funding', { grant: grantId }, amount);
  work.settleArrival(grantId, amount);
  return work.done(job);
}

/**
 * The expiry sweep: a grant past `expires_at` gives its unheld remaining to the breakage
 * account, once. Shares still held stay with their jobs; what they return later leaves
 * then (settleArrival). Whether it funds anything never waits for this: canFund asks
 * the clock.
 */
export function postExpiry(wallet: WalletFunds, job: JobFunding, grantId: string, now: bigint): PostingResult {
  const work = new Working(wallet, now);
  if (!work.has(grantId)) return { ok: false, refusal: { reason: 'unknown_grant', grantId } };
  const grant = work.grant(grantId);
  if (grant.expiryPosted) return { ok: false, refusal: { reason: 'already_expired', grantId } };
  if (grant.expiresAt === null || now < grant.expiresAt) return { ok: false, refusal: { reason: 'expiry_not_due', grantId } };
  const lapsing = unheld(grant);
  work.move('grant_expiry', 'posted', { grant: grantId }, 'breakage', lapsing);
  // the simulation's planted bug: the expiry posted twice
  if (planted('expiry_posted_twice')) work.move('grant_expiry', 'posted', { grant: grantId }, 'breakage', lapsing);
  work.update(grantId, { expiryPosted: true, expiredAmount: grant.expiredAmount + lapsing });
  return work.done(job);
}

/** An operator's void: the unheld remaining leaves at once; held shares stay with their jobs. */
export function postVoid(wallet: WalletFunds, job: JobFunding, grantId: string, now: bigint): PostingResult {
  const work = new Working(wallet, now);
  if (!work.has(grantId)) return { ok: false, refusal: { reason: 'unknown_grant', grantId } };
  const grant = work.grant(grantId);
  if (grant.voided) return { ok: false, refusal: { reason: 'already_voided', grantId } };
  const leaving = unheld(grant);
  work.move('grant_void', 'posted', { grant: grantId }, 'funding', leaving);
  work.update(grantId, { voided: true, voidedAmount: grant.voidedAmount + leaving });
  return work.done(job);
}

/**
 * Money paid back to the payer (a processor's refund, a lost dispute): taken from the
 * grant's unheld remaining, the rest as debt — the money is gone from the card's side
 * whatever the tenant has spent since.
 */
export function postPayerRefund(
  wallet: WalletFunds,
  job: JobFunding,
  grantId: string,
  amount: Micros,
  entry: 'refund' | 'dispute_loss',
  now: bigint,
): PostingResult {
  const work = new Working(wallet, now);
  if (!work.has(grantId)) return { ok: false, refusal: { reason: 'unknown_grant', grantId } };
  const fromGrant = min(unheld(work.grant(grantId)), amount);
  work.move(entry, 'posted', { grant: grantId }, 'funding', fromGrant);
  work.move(entry, 'posted', 'debt', 'funding', amount - fromGrant);
  return work.done(job);
}

/** A refund that failed or was canceled: its money comes back to the grant, paying debt first. */
export function postRefundReversal(wallet: WalletFunds, job: JobFunding, grantId: string, amount: Micros, now: bigint): PostingResult {
  const work = new Working(wallet, now);
  if (!work.has(grantId)) return { ok: false, refusal: { reason: 'unknown_grant', grantId } };
  work.move('refund_reversal', 'posted', 'funding', { grant: grantId }, amount);
  work.settleArrival(grantId, amount);
  return work.done(job);
}
