import type { Queryable } from '../../db/pool.js';
import { NO_FUNDING, post } from '../posting/index.js';
import { findGrant, setDisputed } from '../grants.js';
import { lockWalletFunds } from '../wallet-funds.js';
import { GrantNotFound, PostingRefused, WalletNotFound } from '../errors.js';
import { applyPosting } from '../apply-postings.js';

/**
 * What a payment processor's events do to a paid grant after it activated: money paid back
 * to the payer (a refund, a lost dispute), a refund that failed and comes back, a dispute
 * that freezes the grant. Each is keyed by the processor's object (`settlementKey`: the
 * refund's or the dispute's id, with the tenant), so an event delivered any number of
 * times posts once: the key is looked up under the wallet's lock before anything is written.
 */

export interface PayerRefund {
  grantId: string;
  amount: bigint;
  /** e.g. `${tenant}:refund:re_123`, `${tenant}:dispute:dp_123` */
  settlementKey: string;
  entry: 'refund' | 'dispute_loss';
  reference?: string | null;
}

/** Posts the refund once: from the grant's unheld remaining, the rest as debt. false when posted before. */
export async function postRefundToPayer(tx: Queryable, refund: PayerRefund): Promise<boolean> {
  const locked = await lockGrantWallet(tx, refund.grantId);
  if (await posted(tx, refund.settlementKey)) return false;
  const result = post(locked.funds, NO_FUNDING, {
    kind: 'refund',
    grantId: refund.grantId,
    amount: refund.amount,
    entry: refund.entry,
    now: locked.now,
  });
  if (!result.ok) throw new PostingRefused(refund.settlementKey, result.refusal);
  await applyPosting(tx, locked, result, { settlementKey: refund.settlementKey, reference: refund.reference ?? null });
  return true;
}

/** A refund that failed or was canceled after it posted: its money comes back once (paying debt first). */
export async function reverseRefund(tx: Queryable, refund: Omit<PayerRefund, 'entry'>): Promise<boolean> {
  const locked = await lockGrantWallet(tx, refund.grantId);
  if (!(await posted(tx, refund.settlementKey))) return false; // nothing went out, nothing comes back
  const key = `${refund.settlementKey}:reversal`;
  if (await posted(tx, key)) return false;
  const result = post(locked.funds, NO_FUNDING, {
    kind: 'refund_reversal',
    grantId: refund.grantId,
    amount: refund.amount,
    now: locked.now,
  });
  if (!result.ok) throw new PostingRefused(key, result.refusal);
  await applyPosting(tx, locked, result, { settlementKey: key, reference: refund.reference ?? null });
  return true;
}

/** Freezes (an open dispute) or unfreezes a grant, under its wallet's lock: a frozen grant funds no new hold or charge. */
export async function freezeGrant(tx: Queryable, grantId: string, disputed: boolean): Promise<void> {
  await lockGrantWallet(tx, grantId);
  await setDisputed(tx, grantId, disputed);
}

async function lockGrantWallet(tx: Queryable, grantId: string) {
  const grant = await findGrant(tx, { id: grantId });
  if (!grant) throw new GrantNotFound(grantId);
  const locked = await lockWalletFunds(tx, grant.wallet_id, [], undefined, [grantId]);
  if (!locked) throw new WalletNotFound(grant.wallet_id);
  return locked;
}

async function posted(tx: Queryable, settlementKey: string): Promise<boolean> {
  const found = await tx.query('select 1 from ledger_entries where settlement_key = $1 limit 1', [settlementKey]);
  return (found.rowCount ?? 0) > 0;
}
