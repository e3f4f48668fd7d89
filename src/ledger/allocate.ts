import type { Queryable } from '../db/pool.js';
import { NO_FUNDING, availableAt, post, type Intent, type JobFunding, type Posting, type WalletFunds } from '../funds/posting/index.js';
import { rechargeAfterPosting } from '../funds/payments/recharge.js';
import { systemAccountIds } from '../funds/accounts.js';
import { announceDepleted } from '../funds/grant-events.js';
import { transfersOf } from '../funds/grant-transfers.js';
import type { FundingIntent, PlannedIntent } from './plan-intent.js';
import type { Transfer } from '../funds/transfers.js';
import { lockWalletsFunds, type LockedFunds } from '../funds/wallet-funds.js';
import { writeWalletsFunds, type FundsWrite } from '../funds/wallet-funds-write.js';

/** A written decision, as far as its money goes (write-decision.ts Written). */
export interface FundedDecision {
  job: { row: { id: string; tenant_id: string } };
  plans: readonly PlannedIntent[];
  transfers: Transfer[];
}

/**
 * Splits the settlements of a batch across the grants of their wallets: locks the wallets
 * (in id order, one statement) with their grants and the jobs' shares (one more), asks the
 * posting module for each settlement in order, and replaces each decision's transfers
 * (which moved the wallet as a whole) with the module's entries, each naming its grant.
 * `write` stores every grant's, share's and debt's new values in one statement (then
 * grant.depleted for a grant used up, and a recharge where one is due); the caller runs
 * it after the entries are inserted.
 */
export async function allocateToGrants(
  tx: Queryable,
  byWallet: ReadonlyMap<string, FundedDecision[]>,
): Promise<{ write: () => Promise<void> }> {
  const jobIds = [...new Set([...byWallet.values()].flat().map((w) => w.job.row.id))];
  const tenants = new Set([...byWallet.values()].flat().map((w) => w.job.row.tenant_id));
  const lockedAll = await lockWalletsFunds(tx, [...byWallet.keys()], jobIds, tenants.size === 1 ? [...tenants][0] : undefined);
  const writes: FundsWrite[] = [];
  const after: { locked: LockedFunds; funds: WalletFunds; postings: Posting[] }[] = [];
  for (const [walletId, written] of byWallet) {
    const locked = lockedAll.get(walletId);
    if (!locked) throw new Error(`wallet ${walletId} vanished while settling`);
    let funds = locked.funds;
    const walletJobs = [...new Set(written.map((w) => w.job.row.id))];
    const jobs = new Map<string, JobFunding>(walletJobs.map((id) => [id, locked.jobs.get(id) ?? NO_FUNDING]));
    const postings: { w: FundedDecision; key: string; revenue: string; postings: readonly Posting[] }[] = [];
    for (const w of written) {
      const jobId = w.job.row.id;
      for (const plan of w.plans) {
        const result = post(funds, jobs.get(jobId)!, intentOf(plan.funding, locked.now));
        if (!result.ok) {
          const refusal = JSON.stringify(result.refusal, (_, v) => (typeof v === 'bigint' ? v.toString() : v));
          throw new Error(`the posting module refused ${plan.settlement.key}: ${refusal}`);
        }
        funds = result.wallet;
        jobs.set(jobId, result.job);
        postings.push({ w, key: plan.settlement.key, revenue: plan.revenueAccount, postings: result.postings });
      }
    }
    const parties = new Set(postings.flatMap((p) => p.postings.flatMap((x) => [x.from, x.to])));
    const kinds = (['funding', 'breakage'] as const).filter((kind) => parties.has(kind));
    const others = await systemAccountIds(tx, locked.tenantId, locked.currency, kinds);
    for (const w of written) w.transfers = [];
    for (const p of postings) {
      const jobId = p.w.job.row.id;
      p.w.transfers.push(
        ...transfersOf(p.postings, {
          walletId,
          tenantId: locked.tenantId,
          currency: locked.currency,
          settlementKey: p.key,
          jobId,
          accounts: { ...others, revenue: p.revenue },
          pendingEntryOf: (grantId) => locked.pendingEntries.get(`${jobId}:${grantId}`) ?? null,
        }),
      );
    }
    writes.push({ before: locked, after: funds, jobs });
    after.push({ locked, funds, postings: postings.flatMap((p) => p.postings) });
  }
  return {
    write: async () => {
      await writeWalletsFunds(tx, writes);
      for (const { locked, funds, postings } of after) {
        await announceDepleted(tx, locked, funds, postings, locked.now);
        await rechargeAfterPosting(tx, locked, postings, availableAt(funds, locked.now));
      }
    },
  };
}

function intentOf(funding: FundingIntent, now: bigint): Intent {
  switch (funding.kind) {
    case 'capture':
      return { kind: 'capture', amount: funding.amount, now };
    case 'release':
      return { kind: 'release', now };
    case 'adjustment':
      return { kind: 'adjustment', version: funding.version, amount: funding.amount, now };
  }
}
