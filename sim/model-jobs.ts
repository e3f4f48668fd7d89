import type { Consumption, Funds, Piece, Spend } from './model-funds.js';
import { addUsage, formatMicros, isPriced, isUnits, maxUsage, minMicros, price } from './model-money.js';
import type { AutoExtendRule, ProviderEventType, Usage } from './ops.js';

/**
 * A job's life as the contract tells it ("Job states and events", "Billing rules",
 * "Long-running jobs: hold extensions", and docs/long-running-jobs.md): its hold, how the
 * hold grows, when it is exhausted, and how a terminal event or a correction settles it.
 */

export type JobStateName = 'reserved' | 'running' | 'cancel_requested' | 'captured' | 'released';
export type ExhaustedReason = 'max_limits' | 'insufficient_funds' | 'spend_limit' | null;

export interface Exhausted {
  reason: ExhaustedReason;
  reserved: bigint;
  usagePrice: bigint;
}

export interface Job {
  readonly name: string;
  readonly wallet: string;
  state: JobStateName;
  limits: Record<string, number>;
  readonly autoExtend: AutoExtendRule | null;
  /** the first hold plus every extension */
  reserved: bigint;
  captured: bigint;
  released: bigint;
  adjusted: bigint;
  /** the hold in allocation order: the first hold's shares, then each extension's */
  pieces: Piece[];
  /** what the capture and the positive adjustments took, in that order (a refund undoes from the end) */
  consumed: Consumption[];
  extensions: { version: number; amount: bigint; source: 'api' | 'auto' }[];
  holdExhausted: Exhausted | null;
  usageSoFar: Record<string, number> | null;
  /** the highest usage correction applied (0: none) */
  highestCorrection: number;
  /** the first hold's instant: its day is where a resolution gives the hold back */
  readonly reservedAt: number;
  cancelRequestedAt: number | null;
}

/** What a job's wallet lends it: the money, the tenant's spend and its day limit. */
export interface Books {
  readonly funds: Funds;
  readonly spend: Spend;
  readonly dayLimit: bigint | null;
}

/** Why a hold cannot be made now, if it cannot: funds are checked first, then the day's spend limit. */
export type Refusal = 'insufficient_funds' | 'spend_limit';

export function refusalOf(books: Books, amount: bigint, at: number): { refusal: Refusal; why: string } | null {
  const available = books.funds.available(at);
  if (available < amount) return { refusal: 'insufficient_funds', why: `available ${formatMicros(available)} < ${formatMicros(amount)}` };
  const spent = books.spend.on(at);
  if (books.dayLimit !== null && spent + amount > books.dayLimit) {
    return {
      refusal: 'spend_limit',
      why: `spent today ${formatMicros(spent)} + ${formatMicros(amount)} > limit ${formatMicros(books.dayLimit)}`,
    };
  }
  return null;
}

export function isTerminal(state: JobStateName): boolean {
  return state === 'captured' || state === 'released';
}

/** Why a job's `limits` (and `auto_extend`) would be 422 invalid_limits, or null when valid. */
export function invalidLimits(limits: Usage, rule: AutoExtendRule | null): string | null {
  if (!Object.values(limits).every(isUnits)) return 'limits are not non-negative integers';
  if (price(limits) === 0n) return 'limits price to nothing';
  if (rule === null) return null;
  const steps = Object.entries(rule.step);
  if (steps.length === 0 || !steps.every(([d, units]) => isPriced(d) && isUnits(units) && units > 0))
    return 'a step is not positive units of a priced dimension';
  const caps = Object.keys(rule.max_limits);
  if (caps.length !== steps.length || !steps.every(([d]) => (rule.max_limits[d] ?? -1) >= (limits[d] ?? 0))) {
    return 'max_limits must name the step dimensions, each at least its limit';
  }
  return null;
}

/** Why an extension's `add` would be 422 invalid_limits, or null when valid. */
export function invalidAdd(add: Usage): string | null {
  const entries = Object.entries(add);
  if (entries.length === 0) return 'add is empty';
  return entries.every(([d, units]) => isPriced(d) && isUnits(units) && units > 0)
    ? null
    : 'add is not positive units of priced dimensions';
}

/** A new job: its first hold, already checked by the caller, split across the grants. */
export function reserve(books: Books, name: string, wallet: string, limits: Usage, rule: AutoExtendRule | null, at: number): Job {
  const amount = price(limits);
  books.spend.add(at, amount);
  return {
    name,
    wallet,
    state: 'reserved',
    limits: { ...limits },
    autoExtend: rule,
    reserved: amount,
    captured: 0n,
    released: 0n,
    adjusted: 0n,
    pieces: books.funds.hold(amount, at, false),
    consumed: [],
    extensions: [],
    holdExhausted: null,
    usageSoFar: null,
    highestCorrection: 0,
    reservedAt: at,
    cancelRequestedAt: null,
  };
}

/**
 * The hold grows to `limits`: the price difference is held as one extension, numbered
 * in commit order; one that prices to nothing raises the limits, holds nothing, uses no
 * number. Counted toward the day's spend where it commits.
 */
function growTo(job: Job, books: Books, limits: Record<string, number>, source: 'api' | 'auto', mayOwe: boolean, at: number): void {
  const amount = price(limits) - price(job.limits);
  job.limits = limits;
  if (amount <= 0n) return;
  job.pieces.push(...books.funds.hold(amount, at, mayOwe));
  job.reserved += amount;
  job.extensions.push({ version: job.extensions.length + 1, amount, source });
  books.spend.add(at, amount);
}

/** The target of a step dimension: usage so far + one step while working, usage so far once a cancel was asked; a capture passes its usage. */
function target(job: Job, rule: AutoExtendRule, d: string, capturing: Usage | null): number {
  if (capturing !== null) return capturing[d] ?? 0;
  const soFar = job.usageSoFar?.[d] ?? 0;
  return job.state === 'cancel_requested' ? soFar : soFar + (rule.step[d] ?? 0);
}

/** Limits grown by whole steps to each step dimension's target, capped at max_limits, never lowered. */
function grownLimits(job: Job, rule: AutoExtendRule, capturing: Usage | null): Record<string, number> {
  const limits = { ...job.limits };
  for (const [d, step] of Object.entries(rule.step)) {
    const current = limits[d] ?? 0;
    const goal = target(job, rule, d, capturing);
    if (current >= goal) continue;
    // whole steps, in bigint: a float division could round
    const [from, by] = [BigInt(current), BigInt(step)];
    const smallest = from + ((BigInt(goal) - from + by - 1n) / by) * by;
    const cap = BigInt(rule.max_limits[d] ?? 0);
    limits[d] = Number(smallest < cap ? smallest : cap > from ? cap : from);
  }
  return limits;
}

/**
 * The exhausted check: with auto_extend, some step dimension below its target — the
 * refusal's reason if the extension was refused, `max_limits` if the cap stopped it,
 * else (a tenant's extension re-checking) the earlier finding's reason; without
 * auto_extend, the usage so far priced above the hold (reason null).
 */
function exhaustion(job: Job, refusal: Refusal | null, earlier: ExhaustedReason): Exhausted | null {
  if (isTerminal(job.state) || job.usageSoFar === null) return null;
  const usagePrice = price(job.usageSoFar);
  const rule = job.autoExtend;
  if (rule === null) return usagePrice > job.reserved ? { reason: null, reserved: job.reserved, usagePrice } : null;
  const short = Object.keys(rule.step).filter((d) => (job.limits[d] ?? 0) < target(job, rule, d, null));
  if (short.length === 0) return null;
  const capped = short.some((d) => (job.limits[d] ?? 0) >= (rule.max_limits[d] ?? 0));
  const reason: ExhaustedReason = refusal ?? (capped ? 'max_limits' : (earlier ?? 'max_limits'));
  return { reason, reserved: job.reserved, usagePrice };
}

/**
 * A progress report with usage (cumulative): usage so far is each dimension's largest
 * report; a job with auto_extend grows toward its targets unless the wallet cannot fund
 * the whole extension (then nothing is extended); then the exhausted check.
 */
function reportUsage(job: Job, books: Books, usage: Usage, at: number): void {
  job.usageSoFar = maxUsage(job.usageSoFar, usage);
  let refusal: Refusal | null = null;
  if (job.autoExtend !== null) {
    const limits = grownLimits(job, job.autoExtend, null);
    const amount = price(limits) - price(job.limits);
    refusal = amount > 0n ? (refusalOf(books, amount, at)?.refusal ?? null) : null;
    if (refusal === null) growTo(job, books, limits, 'auto', false, at);
  }
  job.holdExhausted = exhaustion(job, refusal, job.holdExhausted?.reason ?? null);
}

/** The tenant's extension, once the caller found it allowed: limits grow by `add` (max_limits bounds automatic ones only); an exhausted job is checked again. */
export function extendByRequest(job: Job, books: Books, add: Usage, at: number): void {
  growTo(job, books, addUsage(job.limits, add), 'api', false, at);
  if (job.holdExhausted !== null) job.holdExhausted = exhaustion(job, null, job.holdExhausted.reason);
}

/** Price of the tenant's `add` on this job: price(limits + add) − price(limits). */
export function priceOfAdd(job: Job, add: Usage): bigint {
  return price(addUsage(job.limits, add)) - price(job.limits);
}

/** The hold resolved: `amount` captured, the rest released; the whole hold leaves the first hold's day, the capture counts today. */
function resolve(job: Job, books: Books, amount: bigint, at: number): void {
  job.consumed = books.funds.resolve(job.pieces, amount, at);
  job.captured = amount;
  job.released = job.reserved - amount;
  job.holdExhausted = null;
  books.spend.add(job.reservedAt, -job.reserved);
  books.spend.add(at, amount);
}

/** A capturing terminal event: a job with auto_extend first holds the usage beyond its limits (never refused), then captures min(price(usage), reserved). */
function capture(job: Job, books: Books, usage: Usage, at: number): void {
  if (job.autoExtend !== null) growTo(job, books, grownLimits(job, job.autoExtend, usage), 'auto', true, at);
  resolve(job, books, minMicros(price(usage), job.reserved), at);
  job.state = 'captured';
}

export function release(job: Job, books: Books, at: number): void {
  resolve(job, books, 0n, at);
  job.state = 'released';
}

/** A correction above the highest applied on a captured job: charge or refund billable(usage) − (captured + adjustments). */
function adjust(job: Job, books: Books, usage: Usage, correction: number, at: number): void {
  const delta = minMicros(price(usage), job.reserved) - (job.captured + job.adjusted);
  if (delta > 0n) job.consumed.push(...books.funds.charge(delta, at));
  if (delta < 0n) books.funds.refund(job.consumed, -delta, at);
  job.adjusted += delta;
  job.highestCorrection = correction;
  books.spend.add(at, delta);
}

export interface ProviderEvent {
  type: ProviderEventType;
  usage?: Usage;
  correction?: number;
}

/** Why the generic webhook would refuse this body (400 invalid_payload), or null. */
export function invalidEvent(event: ProviderEvent): string | null {
  if (event.usage !== undefined && !Object.values(event.usage).every(isUnits)) return 'usage is not non-negative integers';
  const needsUsage = event.type === 'job.completed' || event.type === 'job.usage_corrected';
  if (needsUsage && event.usage === undefined) return `${event.type} requires data.usage`;
  const correction = event.correction;
  if (event.type === 'job.usage_corrected' && !(correction !== undefined && Number.isSafeInteger(correction) && correction > 0)) {
    return 'job.usage_corrected requires a positive correction';
  }
  return null;
}

/**
 * One accepted event, settled under the job's lock as the lifecycle table says (the
 * generic provider's default policy: a failure releases). On a terminal job only a
 * correction numbered above the highest applied has an effect, on a captured job.
 */
export function settle(job: Job, books: Books, event: ProviderEvent, at: number): void {
  const usage = event.usage;
  const correction = event.correction ?? 0;
  if (isTerminal(job.state)) {
    if (event.type === 'job.usage_corrected' && job.state === 'captured' && correction > job.highestCorrection) {
      adjust(job, books, usage ?? {}, correction, at);
    }
    return;
  }
  switch (event.type) {
    case 'job.started':
    case 'job.progress':
      if (job.state === 'reserved') job.state = 'running';
      if (event.type === 'job.progress' && usage !== undefined) reportUsage(job, books, usage, at);
      return;
    case 'job.completed':
      return capture(job, books, usage ?? {}, at);
    case 'job.failed':
      return release(job, books, at);
    case 'job.canceled':
      return usage === undefined ? release(job, books, at) : capture(job, books, usage, at);
    case 'job.usage_corrected':
      capture(job, books, usage ?? {}, at);
      job.highestCorrection = correction;
      return;
  }
}
