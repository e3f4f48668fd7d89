import type { Queryable } from '../db/pool.js';
import { PostingRefused, lockWalletsFunds, type WalletPostings } from '../funds/index.js';
import { at, NO_FUNDING, post, type JobFunding, type Posting } from '../funds/posting/index.js';
import type { PlannedIntent } from './plan-intent.js';

/** A written decision, as far as its money goes (write-decision.ts Written). */
export interface FundedDecision {
  job: { row: { id: string; tenant_id: string } };
  plans: readonly PlannedIntent[];
  /** N of the job's latest extension once the decision is written (0: its hold never grew) */
  decision: { growth: { extensionCount: number } };
}

/**
 * Asks the posting module for the settlements of a batch, wallet by wallet: locks the
 * wallets (in id order, one statement) with their grants and the jobs' shares (one more),
 * and posts each settlement in order on the funds the previous one left. What it returns
 * is what the one writer (funds/apply-postings.ts) writes: per wallet, each settlement's
 * postings with the key and revenue account that name its entries. A refusal here is a
 * bug (decide() only intends what the hold and the rules allow): PostingRefused.
 */
export async function postingsOfDecisions(
  tx: Queryable,
  byWallet: ReadonlyMap<string, FundedDecision[]>,
): Promise<WalletPostings[]> {
  const jobIds = [...new Set([...byWallet.values()].flat().map((w) => w.job.row.id))];
  const tenants = new Set([...byWallet.values()].flat().map((w) => w.job.row.tenant_id));
  const extended = [...byWallet.values()].flat().filter((w) => w.decision.growth.extensionCount > 0).map((w) => w.job.row.id);
  const lockedAll = await lockWalletsFunds(tx, [...byWallet.keys()], jobIds, tenants.size === 1 ? [...tenants][0] : undefined, extended);
  const wallets: WalletPostings[] = [];
  for (const [walletId, decisions] of byWallet) {
    const locked = lockedAll.get(walletId);
    if (!locked) throw new Error(`wallet ${walletId} vanished while settling`);
    let funds = locked.funds;
    const jobs = new Map<string, JobFunding>(decisions.map((d) => [d.job.row.id, locked.jobs.get(d.job.row.id) ?? NO_FUNDING]));
    const items: { origin: { settlementKey: string; jobId: string; revenueAccountId: string }; postings: readonly Posting[] }[] = [];
    for (const decision of decisions) {
      const jobId = decision.job.row.id;
      for (const plan of decision.plans) {
        const result = post(funds, jobs.get(jobId)!, at(plan.funding, locked.now));
        if (!result.ok) throw new PostingRefused(plan.settlement.key, result.refusal);
        funds = result.wallet;
        jobs.set(jobId, result.job);
        items.push({ origin: { settlementKey: plan.settlement.key, jobId, revenueAccountId: plan.revenueAccount }, postings: result.postings });
      }
    }
    wallets.push({ locked, items, funds, jobs });
  }
  return wallets;
}
