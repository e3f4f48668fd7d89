import type { Micros } from '../money/index.js';
import { quote, type PriceBook, type Usage } from '../pricing/index.js';
import { checkExtension, extensionTarget, usageSoFar, type AutoExtend, type ExtensionPhase } from './extension.js';
import type { ExhaustedReason, HoldExhausted, JobView } from './job-view.js';
import { extensionKey } from './keys.js';
import { isTerminal, type JobState } from './states.js';

/**
 * How a job's hold grows (CONTRACT.md "Long-running jobs: hold extensions"), pure: the
 * extension a usage report or a capturing event asks for, the tenant's own extension,
 * and whether the hold is exhausted after the check. The shell holds what these say,
 * under the job's lock, in the transaction that settles the event or answers the call.
 */

export type { ExhaustedReason, HoldExhausted } from './job-view.js';

/** One extension of the hold: its number, what it holds and the limits after it. */
export interface Extension {
  readonly key: string;
  readonly version: number;
  readonly amount: Micros;
  readonly limits: Usage;
  readonly source: 'api' | 'auto';
  /** a terminal event's: never refused, what grants cannot hold is held against the debt */
  readonly mayOwe: boolean;
}

/** What a job's growth state becomes after an event or an extension. */
export interface Growth {
  readonly limits: Usage;
  readonly reserved: Micros;
  readonly usageSoFar: Usage | null;
  readonly extensionCount: number;
  readonly holdExhausted: HoldExhausted | null;
  /** job.hold_exhausted is sent now: the hold is exhausted at a `reserved` not announced before */
  readonly announceExhausted: boolean;
  /** the hold's expiry moves to now + hold_ttl_seconds (never earlier): an extension, or a settled progress report */
  readonly movesExpiry: boolean;
}

/** The growth fields of a job view, with their defaults (a job before extensions existed). */
export function growthOf(job: JobView): Growth {
  return {
    limits: job.limits ?? {},
    reserved: job.reserved,
    usageSoFar: job.usageSoFar ?? null,
    extensionCount: job.extensionCount ?? 0,
    holdExhausted: job.holdExhausted ?? null,
    announceExhausted: false,
    movesExpiry: false,
  };
}

export function priceOfLimits(book: PriceBook, limits: Usage): Micros {
  return quote(book, limits).amount;
}

/**
 * The extension that takes the job from its limits to `limits`: the price difference at
 * the pinned version under the next number; null when it prices to nothing (the limits
 * rise, nothing is held, no number is used).
 */
export function extensionTo(job: JobView, limits: Usage, source: Extension['source'], mayOwe: boolean): Extension | null {
  const amount = priceOfLimits(job.priceBook, limits) - priceOfLimits(job.priceBook, job.limits ?? {});
  if (amount <= 0n) return null;
  const version = (job.extensionCount ?? 0) + 1;
  return { key: extensionKey(job.tenantId, job.id, version), version, amount, limits, source, mayOwe };
}

/**
 * A report of usage while the job works (a progress report): the usage so far is kept,
 * and for a job with auto_extend the limits are checked against their targets. Returns
 * the extension to hold (null: none) and the growth as if it is held; the shell asks
 * `refused` instead when the wallet cannot fund it.
 */
export function growOnReport(job: JobView, usage: Usage | undefined): { extension: Extension | null; growth: Growth } {
  const before = growthOf(job);
  // Only an event that reports usage is checked; any settled progress report moves the expiry.
  if (usage === undefined) return { extension: null, growth: { ...before, movesExpiry: true } };
  const soFar = usageSoFar(before.usageSoFar, usage);
  const rule = job.autoExtend ?? null;
  if (rule === null) {
    const growth: Growth = { ...before, usageSoFar: soFar, movesExpiry: true };
    return { extension: null, growth: withExhausted(job, growth, exhaustion(job, before.limits, job.reserved, soFar, null)) };
  }
  const check = checkExtension(before.limits, rule, soFar, phaseOf(job.state));
  const extension = check.grew ? extensionTo(job, check.limits, 'auto', false) : null;
  const reserved = job.reserved + (extension?.amount ?? 0n);
  const growth: Growth = {
    ...before,
    limits: check.limits,
    reserved,
    usageSoFar: soFar,
    extensionCount: extension?.version ?? before.extensionCount,
    movesExpiry: true,
  };
  return { extension, growth: withExhausted(job, growth, exhaustion(job, check.limits, reserved, soFar, null)) };
}

/**
 * The wallet could not fund a report's extension (available or a spend limit): nothing
 * is extended, the limits stay, and the hold is exhausted for that reason.
 */
export function refused(job: JobView, growth: Growth, reason: 'insufficient_funds' | 'spend_limit'): Growth {
  const before = growthOf(job);
  const kept: Growth = { ...growth, limits: before.limits, reserved: job.reserved, extensionCount: before.extensionCount };
  return withExhausted(job, kept, exhaustion(job, before.limits, job.reserved, growth.usageSoFar, reason));
}

/**
 * A terminal event that captures `usage`: for a job with auto_extend, the limits grow to
 * the usage billed (whole steps, capped by max_limits) and the difference is held before
 * the capture, never refused. The hold is no longer exhausted: the job ends.
 */
export function growOnCapture(job: JobView, usage: Usage): { extension: Extension | null; growth: Growth } {
  const before = growthOf(job);
  const rule = job.autoExtend ?? null;
  const ending: Growth = { ...before, holdExhausted: null };
  if (rule === null) return { extension: null, growth: ending };
  const check = checkExtension(before.limits, rule, before.usageSoFar ?? {}, { kind: 'capturing', usage });
  const extension = check.grew ? extensionTo(job, check.limits, 'auto', true) : null;
  return {
    extension,
    growth: {
      ...ending,
      limits: check.limits,
      reserved: job.reserved + (extension?.amount ?? 0n),
      extensionCount: extension?.version ?? before.extensionCount,
      movesExpiry: extension !== null,
    },
  };
}

/** The tenant's extension (POST /v1/jobs/{id}/extensions): the limits grow by `add`, whatever max_limits says. */
export function growByRequest(job: JobView, add: Usage): { extension: Extension | null; growth: Growth } {
  const before = growthOf(job);
  const limits: Record<string, number> = { ...before.limits };
  for (const [dimension, units] of Object.entries(add)) limits[dimension] = (limits[dimension] ?? 0) + units;
  const extension = extensionTo(job, limits, 'api', false);
  const reserved = job.reserved + (extension?.amount ?? 0n);
  const growth: Growth = {
    ...before,
    limits,
    reserved,
    extensionCount: extension?.version ?? before.extensionCount,
    movesExpiry: extension !== null,
  };
  // Checked again only where a check found it short: an extension may give the headroom back.
  const exhausted =
    before.holdExhausted === null ? null : exhaustion(job, limits, reserved, before.usageSoFar, null, before.holdExhausted.reason);
  return { extension, growth: withExhausted(job, growth, exhausted) };
}

/**
 * Whether the hold is short after a check (CONTRACT.md "Exhausted"): with auto_extend,
 * some step dimension's limit below its target (with one step of headroom while the job
 * works, without it once a cancel was asked for); without, usage so far priced above the
 * hold. Null: not short, or nothing reported yet, or the job has ended.
 */
export function exhaustion(
  job: JobView,
  limits: Usage,
  reserved: Micros,
  soFar: Usage | null,
  refusal: 'insufficient_funds' | 'spend_limit' | null,
  earlierReason: ExhaustedReason = null,
): HoldExhausted | null {
  if (isTerminal(job.state) || soFar === null) return null;
  const usagePrice = priceOfLimits(job.priceBook, soFar);
  const rule = job.autoExtend ?? null;
  if (rule === null) return usagePrice > reserved ? { reason: null, reserved, usagePrice } : null;
  const phase = phaseOf(job.state);
  const short = Object.keys(rule.step).filter((d) => (limits[d] ?? 0) < extensionTarget(phase, soFar, rule.step, d));
  if (short.length === 0) return null;
  const capped = short.some((d) => (limits[d] ?? 0) >= (rule.maxLimits[d] ?? 0));
  const reason: ExhaustedReason = refusal ?? (capped ? 'max_limits' : (earlierReason ?? 'max_limits'));
  return { reason, reserved, usagePrice };
}

function phaseOf(state: JobState): ExtensionPhase {
  return state === 'cancel_requested' ? { kind: 'cancel_requested' } : { kind: 'running' };
}

/**
 * The growth with its exhausted state, announced once per value of `reserved`. A finding
 * equal to the job's own is the job's own (the shell keeps its instant).
 */
function withExhausted(job: JobView, growth: Growth, exhausted: HoldExhausted | null): Growth {
  const earlier = job.holdExhausted ?? null;
  const same =
    exhausted !== null &&
    earlier !== null &&
    earlier.reason === exhausted.reason &&
    earlier.reserved === exhausted.reserved &&
    earlier.usagePrice === exhausted.usagePrice;
  const announce = exhausted !== null && job.exhaustedAnnounced !== exhausted.reserved;
  return { ...growth, holdExhausted: same ? earlier : exhausted, announceExhausted: announce };
}
