import type { Queryable } from '../db/pool.js';
import { newId } from '../ids.js';
import { latestPriceVersion, priceBookOf } from '../catalog/prices.js';
import { pricedDimensions, quote, unitPriceOf, validateUsage, type PriceBook, type Usage } from '../pricing/index.js';
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
    reason: 'unpriced' | 'zero' | { readonly detail: string } = 'unpriced',
  ) {
    super(
      reason === 'unpriced'
        ? `limits must name at least one dimension the price bills: ${priced.join(', ')}`
        : reason === 'zero'
          ? `these limits reserve 0.000000, so the job could bill nothing whatever its usage; raise the limits of the billed dimensions (${priced.join(', ')}) until they price above zero`
          : `${reason.detail} (the dimensions the price bills: ${priced.join(', ')})`,
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
  /** {step, max_limits} (CONTRACT.md "Long-running jobs: hold extensions"); absent: the hold never grows by itself */
  autoExtend?: unknown;
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
  const autoExtend = request.autoExtend === undefined || request.autoExtend === null ? null : validAutoExtend(request.autoExtend, limits, book);
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
    autoExtend,
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

/**
 * auto_extend as the contract has it: every step dimension one the pinned price bills,
 * with a positive integer; max_limits naming exactly the step's dimensions, each at least
 * the job's limit of it (absent from limits: 0). The hold at max_limits must stay within
 * the largest amount Tally holds, so an automatic extension never meets that bound.
 */
function validAutoExtend(input: unknown, limits: Usage, book: PriceBook): { step: Record<string, number>; max_limits: Record<string, number> } {
  const refuse = (detail: string): never => {
    throw new InvalidLimits(pricedDimensions(book), { detail: `auto_extend: ${detail}` });
  };
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return refuse('must be {step, max_limits}');
  const { step: rawStep, max_limits: rawMax, ...rest } = input as Record<string, unknown>;
  if (Object.keys(rest).length > 0) refuse(`unknown field ${Object.keys(rest)[0]}`);
  const step = positiveUnits(rawStep, 'step', book, refuse);
  const max = positiveUnits(rawMax, 'max_limits', book, refuse, true);
  const stepDimensions = Object.keys(step).sort();
  if (stepDimensions.join('\u0000') !== Object.keys(max).sort().join('\u0000'))
    refuse(`max_limits must name exactly the dimensions of step (${stepDimensions.join(', ')})`);
  for (const dimension of stepDimensions)
    if (max[dimension]! < (limits[dimension] ?? 0)) refuse(`max_limits.${dimension} is below the job's limit of it (${limits[dimension]})`);
  const ceiling = quote(book, { ...limits, ...max }).amount;
  if (ceiling > MAX_AMOUNT_MICROS)
    throw new AmountOutOfRange('the reservation at auto_extend.max_limits', formatAmount(ceiling), formatAmount(MAX_AMOUNT_MICROS));
  return { step, max_limits: max };
}

/**
 * Units per dimension for an extension: an object of at least one dimension, each one the
 * pinned price bills, with a positive safe integer (zero too, where `zeroAllowed`).
 * InvalidLimits otherwise (422 invalid_limits).
 */
export function positiveUnits(
  input: unknown,
  name: string,
  book: PriceBook,
  refuse: (detail: string) => never = (detail) => {
    throw new InvalidLimits(pricedDimensions(book), { detail });
  },
  zeroAllowed = false,
): Record<string, number> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return refuse(`${name} must be an object of dimension → units`);
  const entries = Object.entries(input);
  if (entries.length === 0) refuse(`${name} must name at least one dimension`);
  for (const [dimension, units] of entries) {
    if (unitPriceOf(book, dimension) === undefined) refuse(`${name}.${dimension} is not a dimension the price bills`);
    if (typeof units !== 'number' || !Number.isSafeInteger(units) || units < (zeroAllowed ? 0 : 1))
      refuse(`${name}.${dimension} must be a ${zeroAllowed ? 'non-negative' : 'positive'} integer`);
  }
  return Object.fromEntries(entries) as Record<string, number>;
}
