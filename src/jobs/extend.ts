import type { Queryable } from '../db/pool.js';
import { growByRequest, isTerminal } from '../lifecycle/index.js';
import { AmountOutOfRange, MAX_AMOUNT_MICROS, formatAmount } from '../money/index.js';
import { JobNotFound, JobTerminal, holdExtension, lockJob, writeGrowth } from '../ledger/index.js';
import { positiveUnits } from './submit.js';

export interface ExtendJobRequest {
  tenantId: string;
  jobId: string;
  /** units per dimension to add to the job's limits */
  add: unknown;
}

/**
 * POST /v1/jobs/{id}/extensions (CONTRACT.md "Long-running jobs: hold extensions"): under
 * the job's lock, its limits grow by `add` and its hold by price(limits + add) −
 * price(limits) at the pinned version, as the job's next extension. In the caller's
 * transaction: InvalidLimits (422), JobTerminal (409), InsufficientFunds or
 * SpendLimitReached (402) — each throws and the caller's transaction writes nothing.
 * An extension that prices to nothing raises the limits and holds nothing (no number).
 * `max_limits` bounds automatic extensions only.
 */
export async function extendJob(tx: Queryable, request: ExtendJobRequest): Promise<void> {
  const job = await lockJob(tx, request.jobId, request.tenantId);
  if (!job) throw new JobNotFound(request.jobId);
  const add = positiveUnits(request.add, 'add', job.view.priceBook);
  if (isTerminal(job.row.state)) throw new JobTerminal(job.row.state);
  const { extension, growth } = growByRequest(job.view, add);
  if (growth.reserved > MAX_AMOUNT_MICROS)
    throw new AmountOutOfRange("the job's hold after this extension", formatAmount(growth.reserved), formatAmount(MAX_AMOUNT_MICROS));
  if (extension) await holdExtension(tx, job, extension);
  await writeGrowth(tx, job, growth);
}
