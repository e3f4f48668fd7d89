import type { Micros } from '../money/index.js';
import type { PricingSnapshot, Usage } from '../pricing/index.js';
import { growthOf, type Growth } from './growth.js';
import type { JobView } from './job-view.js';
import { settlementKey, type ChargeType } from './keys.js';
import type { JobState } from './states.js';

/**
 * What a job's settlement asks the posting module to move (funds/posting's Intent for a
 * job, without the wallet's instant, which only the locked wallet knows): the one intent
 * type of a job's money, from decide() to the posting writer.
 */
export type JobIntent =
  | { readonly kind: 'capture'; readonly amount: Micros }
  | { readonly kind: 'release' }
  | { readonly kind: 'adjustment'; readonly version: number; readonly amount: Micros }
  /**
   * The hold grows by `amount` under the job's Nth extension. `mayOwe`: a terminal
   * event's (the work is delivered): never refused, what no grant can hold is held as debt.
   */
  | { readonly kind: 'extension'; readonly version: number; readonly amount: Micros; readonly mayOwe: boolean };

/**
 * What the shell must write for one decision. Amounts are final: the shell
 * posts them as they are and never prices again. `posting` is what the posting
 * module is asked to move (funds/posting: the one intent type of money), the
 * rest is the settlement row's.
 */
export type Intent =
  | {
      kind: 'capture';
      key: string;
      /** The billable amount posted from the hold. */
      amount: Micros;
      /** reserved − amount, voided in the same settlement. */
      remainder: Micros;
      snapshot: PricingSnapshot;
      posting: Extract<JobIntent, { kind: 'capture' }>;
    }
  | {
      kind: 'release';
      key: string;
      /** The whole hold (= reserved), voided. */
      amount: Micros;
      reason: string;
      posting: Extract<JobIntent, { kind: 'release' }>;
    }
  | {
      /** the hold grows before anything else of the decision (a capture then captures from it) */
      kind: 'extension';
      key: string;
      version: number;
      amount: Micros;
      /** the job's limits after it */
      limits: Usage;
      source: 'api' | 'auto';
      posting: Extract<JobIntent, { kind: 'extension' }>;
    }
  | {
      kind: 'adjustment';
      key: string;
      version: number;
      /** Signed from the wallet's side: >0 charges, <0 refunds, may be 0. */
      amount: Micros;
      snapshot: PricingSnapshot;
      /** an operator's adjustment says why ("operator: …"); a provider's correction says nothing */
      reason?: string;
      posting: Extract<JobIntent, { kind: 'adjustment' }>;
    };

/** Inconsistencies decide() notices; the shell records them for reconciliation. */
export type Alert = 'usage_exceeds_reservation' | 'late_success_after_release' | 'late_usage_after_release';

/**
 * How the event is recorded in the job view. `rejected` is only for a tenant's
 * cancel of a terminal job (the API answers 409 job_terminal); every status
 * other than `applied` carries a stable snake_case reason.
 */
export interface Outcome {
  status: 'applied' | 'no_effect' | 'stale' | 'rejected';
  reason?: string;
  raises: Alert[];
}

/** A job's money columns: what its hold resolved into, and its adjustments since. */
export interface JobTotals {
  captured: Micros | null;
  released: Micros | null;
  adjusted: Micros;
}

/**
 * Everything the shell writes for one event, computed here so that no lifecycle rule
 * lives in the shell: it locks the job, asks decide(), and writes this.
 */
export interface Decision {
  nextState: JobState;
  intents: Intent[];
  outcome: Outcome;
  highestCorrection: number;
  /** the job's totals once the intents are written */
  totals: JobTotals;
  /** jobs.resume_state to store: set entering usage_pending, cleared leaving it by a mismatch */
  resumeState: JobState | null;
  /** the tenant's cancel is recorded (jobs.cancel_requested_at), even where the state stays */
  recordsCancel: boolean;
  /**
   * The settlement key of this event's effect: the one its intent writes, or, for an
   * event that repeats an effect already written (a second completion: the capture; a
   * repeated correction: its adjustment), that one. An event of another phase (a failure
   * after the capture) has no effect of its own: null.
   */
  effectKey: string | null;
  /**
   * The job's limits, reservation, usage so far, extensions and exhausted state once the
   * intents are written (CONTRACT.md "Long-running jobs"); unchanged unless the event grew
   * the hold, reported usage or settled a progress report.
   */
  growth: Growth;
}

/** The job as it is: its totals, resume state and no cancel to record. */
export function unchanged(job: JobView): Omit<Decision, 'nextState' | 'intents' | 'outcome'> {
  return {
    growth: growthOf(job),
    highestCorrection: job.highestCorrection,
    totals: { captured: job.captured, released: job.released ?? null, adjusted: job.adjusted },
    resumeState: job.resumeState ?? null,
    recordsCancel: false,
    effectKey: null,
  };
}

/** A decision that writes nothing financial and leaves the job where it is (or moves it to `nextState`). */
export function noIntents(
  job: JobView,
  status: Outcome['status'],
  reason: string | undefined,
  raises: Alert[] = [],
  nextState: JobState = job.state,
): Decision {
  const outcome: Outcome = reason === undefined ? { status, raises } : { status, reason, raises };
  return { ...unchanged(job), nextState, intents: [], outcome };
}

/**
 * Any event that arrives after the hold is resolved: recorded, never financial. Its
 * effect is the resolution when that is the one this event asked for (`asked`).
 */
export function alreadyResolved(job: JobView, raises: Alert[] = [], asked: ChargeType | null = null): Decision {
  const resolvedBy: ChargeType = job.state === 'captured' ? 'capture' : 'release';
  const reason = resolvedBy === 'capture' ? 'job_already_captured' : 'job_already_released';
  const decision = noIntents(job, 'no_effect', reason, raises);
  return asked === resolvedBy ? { ...decision, effectKey: settlementKey(job.tenantId, job.id, resolvedBy, 1) } : decision;
}
