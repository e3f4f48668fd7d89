import type { Micros } from '../money/index.js';
import type { PricingSnapshot } from '../pricing/index.js';
import type { JobView } from './job-view.js';
import type { JobState } from './states.js';

/**
 * What the shell must write for one decision. Amounts are final: the shell
 * posts them as they are and never prices again.
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
    }
  | {
      kind: 'release';
      key: string;
      /** The whole hold (= reserved), voided. */
      amount: Micros;
      reason: string;
    }
  | {
      kind: 'adjustment';
      key: string;
      version: number;
      /** Signed from the wallet's side: >0 charges, <0 refunds, may be 0. */
      amount: Micros;
      snapshot: PricingSnapshot;
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

export interface Decision {
  nextState: JobState;
  intents: Intent[];
  outcome: Outcome;
  highestCorrection: number;
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
  return { nextState, intents: [], outcome, highestCorrection: job.highestCorrection };
}

/** Any event that arrives after the hold is resolved: recorded, never financial. */
export function alreadyResolved(job: JobView, raises: Alert[] = []): Decision {
  const reason = job.state === 'captured' ? 'job_already_captured' : 'job_already_released';
  return noIntents(job, 'no_effect', reason, raises);
}
