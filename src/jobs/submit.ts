import type { Queryable } from '../db/pool.js';
import { newId } from '../ids.js';
import { latestPriceVersion, priceBookOf } from '../catalog/prices.js';
import { pricedDimensions, quote, unitPriceOf, validateUsage } from '../pricing/index.js';
import { AmountOutOfRange, MAX_AMOUNT_MICROS, formatAmount } from '../money/index.js';
import { parsePolicy } from '../lifecycle/index.js';
import type { AccountRow } from '../funds/index.js';
import { insertJob, reserveHold } from '../ledger/index.js';
import type { JobRow } from './rows.js';

export class NoPrice extends Error {
  readonly code = 'no_price';
  constructor(model: string, currency: string) {
    super(`model ${model} has no price in ${currency}; publish one with PUT /v1/prices/{model}`);
    this.name = 'NoPrice';
  }
}

/**
 * Limits that would reserve nothing: they name no dimension the pinned price bills, or the
 * ones they name price to zero (0 units, or too few to reach one micro-unit). Such a job
 * would pass the funds check with nothing held and then bill nothing, whatever its usage,
 * since a capture never charges more than the hold.
 */
export class InvalidLimits extends Error {
  readonly code = 'invalid_limits';
  constructor(
    readonly priced: string[],
    reason: 'unpriced' | 'zero' = 'unpriced',
  ) {
    super(
      reason === 'unpriced'
        ? `limits must name at least one dimension the price bills: ${priced.join(', ')}`
        : `these limits reserve 0.000000, so the job could bill nothing whatever its usage; raise the limits of the billed dimensions (${priced.join(', ')}) until they price above zero`,
    );
    this.name = 'InvalidLimits';
  }
}

export interface SubmitJobRequest {
  tenantId: string;
  wallet: Pick<AccountRow, 'id' | 'currency'>;
  provider: { name: string; policies: unknown };
  model: string;
  providerJobRef?: string | null;
  limits: unknown;
  metadata?: Record<string, string>;
}

/**
 * Creates a job and reserves the price of its limits at the newest price version,
 * which the job pins. Runs inside the caller's transaction: InsufficientFunds or
 * NoPrice roll everything back. Lock order: the new job row, then the wallet, then
 * the tenant's revenue account.
 */
export async function submitJob(tx: Queryable, request: SubmitJobRequest): Promise<JobRow> {
  const limits = validateUsage(request.limits);
  const price = await latestPriceVersion(tx, request.model, request.wallet.currency);
  if (!price) throw new NoPrice(request.model, request.wallet.currency);
  const book = priceBookOf(price);
  if (!Object.keys(limits).some((dimension) => unitPriceOf(book, dimension) !== undefined)) throw new InvalidLimits(pricedDimensions(book));
  const reservation = quote(book, limits).amount;
  if (reservation === 0n) throw new InvalidLimits(pricedDimensions(book), 'zero');
  if (reservation > MAX_AMOUNT_MICROS)
    throw new AmountOutOfRange('the reservation for these limits', formatAmount(reservation), formatAmount(MAX_AMOUNT_MICROS));
  const policy = parsePolicy(request.provider.policies);
  const id = newId();
  const job = await insertJob(tx, {
    id,
    tenantId: request.tenantId,
    walletId: request.wallet.id,
    provider: request.provider.name,
    providerJobRef: request.providerJobRef ?? null,
    model: request.model,
    currency: request.wallet.currency,
    priceVersionId: price.id,
    limits,
    reserved: reservation,
    holdTtlSeconds: policy.holdTtlSeconds,
    metadata: request.metadata ?? {},
  });
  await reserveHold(tx, {
    jobId: id,
    tenantId: request.tenantId,
    walletId: request.wallet.id,
    currency: request.wallet.currency,
    amount: reservation,
    expiresAt: job.hold_expires_at,
  });
  return job;
}
