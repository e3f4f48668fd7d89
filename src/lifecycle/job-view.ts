import type { Micros } from '../money/index.js';
import type { PriceBook, Usage } from '../pricing/index.js';
import type { AutoExtend } from './extension.js';
import type { JobState } from './states.js';

/** Why a check left the hold short: the tenant's cap, or the wallet (refused). Null: a job without auto_extend whose usage outgrew it. */
export type ExhaustedReason = 'max_limits' | 'insufficient_funds' | 'spend_limit' | null;

/** A check found the hold short of the job's usage (CONTRACT.md "Long-running jobs", exhausted). */
export interface HoldExhausted {
  readonly reason: ExhaustedReason;
  /** the hold it was short of */
  readonly reserved: Micros;
  /** the price of the usage so far at the pinned version, uncapped */
  readonly usagePrice: Micros;
}

/**
 * What decide() needs to know about a job: values the shell reads from the job
 * row it has locked (SELECT … FOR UPDATE), so "charged so far" cannot change
 * while the decision is made and written.
 */
export interface JobView {
  readonly id: string;
  readonly tenantId: string;
  readonly state: JobState;
  /** The hold's amount: the price of the job's limits at the pinned version (the first hold and every extension). */
  readonly reserved: Micros;
  /** What the capture charged; null until the hold is captured. */
  readonly captured: Micros | null;
  /** What the resolution voided; null until the hold is resolved. Absent: null. */
  readonly released?: Micros | null;
  /** Sum of signed adjustments (>0 charged, <0 refunded). */
  readonly adjusted: Micros;
  /** The highest correction number applied; 0 when none. */
  readonly highestCorrection: number;
  /** The price book version pinned when the job was created. */
  readonly priceBook: PriceBook;
  /**
   * `usage_pending` remembers the state the fetch interrupted (jobs.resume_state), to
   * return to when the fetched usage turns out not to be the job's. Absent: null.
   */
  readonly resumeState?: JobState | null;
  /** The tenant asked to cancel (jobs.cancel_requested_at is set). Absent: false. */
  readonly cancelRequested?: boolean;
  /**
   * An accepted event of this job is still waiting to settle (pending, processing or
   * dead). Read under the job lock, and only for events that yield to it
   * (yieldsToAwaitingEvents). Absent: false.
   */
  readonly eventAwaiting?: boolean;
  /** The job's limits now (raised by extensions). Absent: none known (a job that never grows). */
  readonly limits?: Usage;
  /** The tenant's rule for automatic extensions. Absent: null. */
  readonly autoExtend?: AutoExtend | null;
  /** Each dimension's largest usage in the progress reports. Absent: null. */
  readonly usageSoFar?: Usage | null;
  /** N of the latest extension (0: none). Absent: 0. */
  readonly extensionCount?: number;
  /** The latest check's finding that the hold is short. Absent: null. */
  readonly holdExhausted?: HoldExhausted | null;
  /** The `reserved` job.hold_exhausted was last sent for. Absent: null. */
  readonly exhaustedAnnounced?: Micros | null;
}

/** A job row that contradicts itself: a shell or data bug to surface, never to bill from. */
export class InvalidJobViewError extends Error {
  readonly code = 'invalid_job_view';

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidJobViewError';
  }
}

export function assertJobView(job: JobView): void {
  if (job.reserved < 0n) throw new InvalidJobViewError(`job ${job.id} has a negative reservation`);
  if (!Number.isSafeInteger(job.highestCorrection) || job.highestCorrection < 0) {
    throw new InvalidJobViewError(`job ${job.id} has an invalid highest correction`);
  }
  if (job.state === 'captured' && (job.captured === null || job.captured < 0n)) {
    throw new InvalidJobViewError(`job ${job.id} is captured but has no captured amount`);
  }
}
