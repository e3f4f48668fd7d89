import type { Queryable } from '../db/pool.js';
import { NO_FUNDING, availableAt, post, type Intent, type JobFunding, type Posting } from '../funds/posting/index.js';
import { rechargeAfterPosting } from '../funds/payments/recharge.js';
import { systemAccountIds } from './accounts.js';
import { announceDepleted } from './grant-events.js';
import { transfersOf } from './grant-transfers.js';
import type { FundingIntent, PlannedIntent } from './plan-intent.js';
import type { Transfer } from './transfers.js';
import { lockWalletFunds, writeWalletFunds } from '../funds/wallet-funds.js';

/** A written decision, as far as its money goes (write-decision.ts Written). */
export interface FundedDecision {
  job: { row: { id: string } };
  plans: readonly PlannedIntent[];
  transfers: Transfer[];
}

/**
 * Splits the settlements of one wallet across its grants: locks the wallet with its
 * grants and the jobs' shares, asks the posting module for each settlement in order, and
 * replaces each decision's transfers (which moved the wallet as a whole) with the
 * module's entries, each naming its grant. `write` stores the grants', shares' and
 * debt's new values (and grant.depleted for a grant used up); the caller runs it after
 * the entries are inserted.
 */
export async function allocateToGrants(
  tx: Queryable,
  walletId: string,
  written: FundedDecision[],
): Promise<{ write: () => Promise<void> }> {
  const jobIds = [...new Set(written.map((w) => w.job.row.id))];
  const locked = await lockWalletFunds(tx, walletId, jobIds);
  if (!locked) throw new Error(`wallet ${walletId} vanished while settling`);
  let funds = locked.funds;
  const jobs = new Map<string, JobFunding>(jobIds.map((id) => [id, locked.jobs.get(id) ?? NO_FUNDING]));
  const postings: { w: FundedDecision; key: string; revenue: string; postings: readonly Posting[] }[] = [];
  for (const w of written) {
    const jobId = w.job.row.id;
    for (const plan of w.plans) {
      const result = post(funds, jobs.get(jobId)!, intentOf(plan.funding, locked.now));
      if (!result.ok)
        throw new Error(
          `the posting module refused ${plan.settlement.key}: ${JSON.stringify(result.refusal, (_, v) => (typeof v === 'bigint' ? v.toString() : v))}`,
        );
      funds = result.wallet;
      jobs.set(jobId, result.job);
      postings.push({ w, key: plan.settlement.key, revenue: plan.revenueAccount, postings: result.postings });
    }
  }
  const parties = new Set(postings.flatMap((p) => p.postings.flatMap((x) => [x.from, x.to])));
  const others = await systemAccountIds(
    tx,
    locked.tenantId,
    locked.currency,
    (['funding', 'breakage'] as const).filter((kind) => parties.has(kind)),
  );
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
  return {
    write: async () => {
      await writeWalletFunds(tx, locked, funds, jobs);
      await announceDepleted(
        tx,
        locked,
        funds,
        postings.flatMap((p) => p.postings),
        locked.now,
      );
      await rechargeAfterPosting(
        tx,
        locked,
        postings.flatMap((p) => p.postings),
        availableAt(funds, locked.now),
      );
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
