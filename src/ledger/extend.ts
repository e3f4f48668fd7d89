import type { Queryable } from '../db/pool.js';
import { InsufficientFunds, PostingRefused, SpendLimitReached, WalletNotFound, applyPostings, lockWalletFunds } from '../funds/index.js';
import { NO_FUNDING, post } from '../funds/posting/index.js';
import { refused, type Decision, type Extension, type Intent } from '../lifecycle/index.js';
import { formatAmount } from '../money/index.js';
import { enqueueMessages } from '../outbound/enqueue.js';
import { failpoint } from '../failpoints.js';
import { planted } from '../plants.js';
import { findHolds } from './hold.js';
import type { LockedJob } from './locked-job.js';

/**
 * Holding an extension of a job's open hold (CONTRACT.md "Long-running jobs: hold
 * extensions"), under the job's lock the caller holds: the posting module allocates it
 * across the wallet's grants like a reservation (refused unless available covers it, but
 * for a terminal event's), the one writer writes its reserve entries under the
 * extension's key (the tenant's spend limits checked there, like a reservation's), and
 * then its record, the hold's new amount and job.hold_extended. The job row itself
 * (limits, reserved, extension count) is written with the rest of the decision.
 */
export async function holdExtension(tx: Queryable, job: LockedJob, extension: Extension): Promise<void> {
  const { row } = job;
  const hold = (await findHolds(tx, [row.id], row.tenant_id)).get(row.id)!;
  const locked = await lockWalletFunds(
    tx,
    row.wallet_id,
    [row.id],
    { tenantId: row.tenant_id, currency: row.currency },
    [],
    (job.view.extensionCount ?? 0) > 0 ? [row.id] : [],
  );
  if (locked === null) throw new WalletNotFound(row.wallet_id);
  const posting = post(locked.funds, locked.jobs.get(row.id) ?? NO_FUNDING, {
    kind: 'extension',
    version: extension.version,
    amount: extension.amount,
    mayOwe: extension.mayOwe,
    now: locked.now,
  });
  if (!posting.ok) {
    if (posting.refusal.reason === 'insufficient_funds') throw new InsufficientFunds(row.wallet_id, extension.amount);
    throw new PostingRefused(extension.key, posting.refusal);
  }
  const [applied] = await applyPostings(
    tx,
    [
      {
        locked,
        items: [
          {
            origin: { settlementKey: extension.key, jobId: row.id, revenueAccountId: hold.revenue_account_id },
            postings: posting.postings,
          },
        ],
        funds: posting.wallet,
        jobs: new Map([[row.id, posting.job]]),
      },
    ],
    // A terminal event's extension counts toward the spend limits and may exceed them.
    // (the simulation's planted bug, extension_not_counted: no guard, past the spend limits)
    {
      ...(extension.mayOwe || planted('extension_not_counted') ? {} : { guard: { currency: row.currency, requested: extension.amount } }),
      overdraft: 'raise',
    },
  );
  const allocation = applied![0]!.rows.map((entry) => ({ grant_id: entry.grant_id, amount: entry.amount.toString(), entry_id: entry.id }));
  const owed = applied![0]!.rows.reduce((sum, entry) => (entry.grant_id === null ? sum + entry.amount : sum), 0n);
  const reserved = hold.amount + extension.amount;
  await tx.query({
    name: 'insert_job_extension',
    text: `with extended as (
        update holds set amount = amount + $5, owed = owed + $9 where tenant_id = $2 and job_id = $1 and resolved_by is null returning job_id
      )
      insert into job_extensions (job_id, tenant_id, version, settlement_key, amount, limits, source, allocation)
      select $1, $2, $3, $4, $5, $6, $7, $8 from extended`,
    values: [
      row.id,
      row.tenant_id,
      extension.version,
      extension.key,
      extension.amount.toString(),
      JSON.stringify(extension.limits),
      extension.source,
      JSON.stringify(allocation),
      owed.toString(),
    ],
  });
  await enqueueMessages(tx, [
    {
      tenantId: row.tenant_id,
      type: 'job.hold_extended',
      data: {
        job_id: row.id,
        version: extension.version,
        amount: formatAmount(extension.amount),
        reserved: formatAmount(reserved),
        limits: extension.limits,
        source: extension.source,
      },
    },
  ]);
}

/**
 * The extensions of a batch's decisions, each held before the rest of its decision is
 * written (a capture then captures from the grown hold). A progress report's extension
 * the wallet cannot fund — available or a spend limit — changes nothing (a savepoint takes
 * back what the refused statement wrote) and leaves the hold exhausted for that reason.
 * Returns the decisions without their extension intents (held now), growth revised where
 * refused.
 */
export async function holdDecidedExtensions(
  tx: Queryable,
  jobs: readonly LockedJob[],
  decisions: readonly Decision[],
): Promise<Decision[]> {
  const result: Decision[] = [];
  for (const [i, decision] of decisions.entries()) {
    const intent = decision.intents.find((x): x is Extract<Intent, { kind: 'extension' }> => x.kind === 'extension');
    if (!intent) {
      result.push(decision);
      continue;
    }
    const rest = decision.intents.filter((x) => x !== intent);
    const extension: Extension = {
      key: intent.key,
      version: intent.version,
      amount: intent.amount,
      limits: intent.limits,
      source: intent.source,
      mayOwe: intent.posting.mayOwe,
    };
    if (extension.mayOwe) {
      await holdExtension(tx, jobs[i]!, extension);
      // between a terminal event's extension and its capture (the failure-injection suite)
      failpoint('settle.after_extension');
      result.push({ ...decision, intents: rest });
      continue;
    }
    await tx.query('savepoint extension');
    try {
      await holdExtension(tx, jobs[i]!, extension);
      await tx.query('release savepoint extension');
      result.push({ ...decision, intents: rest });
    } catch (error) {
      if (!(error instanceof InsufficientFunds || error instanceof SpendLimitReached)) throw error;
      await tx.query('rollback to savepoint extension');
      const reason = error instanceof InsufficientFunds ? 'insufficient_funds' : 'spend_limit';
      result.push({ ...decision, intents: rest, growth: refused(jobs[i]!.view, decision.growth, reason) });
    }
  }
  return result;
}
