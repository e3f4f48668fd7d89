import { billable, snapshotOf, type Usage } from '../pricing/index.js';
import type { Alert, Decision } from './decision.js';
import type { JobView } from './job-view.js';
import { settlementKey } from './keys.js';

/**
 * Resolve the hold by charging `usage`: the billable amount (capped at the
 * reservation) is posted and the remainder voided in the same settlement.
 */
export function captureDecision(job: JobView, usage: Usage, highestCorrection: number): Decision {
  const charge = billable(job.priceBook, usage, job.reserved);
  return {
    nextState: 'captured',
    intents: [
      {
        kind: 'capture',
        key: settlementKey(job.tenantId, job.id, 'capture', 1),
        amount: charge.amount,
        remainder: job.reserved - charge.amount,
        snapshot: snapshotOf(job.priceBook, usage, job.reserved),
      },
    ],
    outcome: { status: 'applied', raises: exceeds(charge.exceedsReservation) },
    highestCorrection,
  };
}

/** Resolve the hold by voiding all of it. */
export function releaseDecision(job: JobView, reason: string): Decision {
  return {
    nextState: 'released',
    intents: [
      { kind: 'release', key: settlementKey(job.tenantId, job.id, 'release', 1), amount: job.reserved, reason },
    ],
    outcome: { status: 'applied', reason, raises: [] },
    highestCorrection: job.highestCorrection,
  };
}

/**
 * Bring what a captured job has been charged in total to billable(corrected
 * usage): the difference is charged (>0) or refunded (<0). Computed from the
 * locked job's totals, so the total charged always equals billable() of the
 * newest applied usage, whatever was charged before.
 */
export function adjustmentDecision(job: JobView, usage: Usage, correction: number): Decision {
  const charge = billable(job.priceBook, usage, job.reserved);
  const chargedSoFar = (job.captured ?? 0n) + job.adjusted;
  return {
    nextState: job.state,
    intents: [
      {
        kind: 'adjustment',
        key: settlementKey(job.tenantId, job.id, 'adjustment', correction),
        version: correction,
        amount: charge.amount - chargedSoFar,
        snapshot: snapshotOf(job.priceBook, usage, job.reserved),
      },
    ],
    outcome: { status: 'applied', raises: exceeds(charge.exceedsReservation) },
    highestCorrection: correction,
  };
}

function exceeds(exceedsReservation: boolean): Alert[] {
  return exceedsReservation ? ['usage_exceeds_reservation'] : [];
}
