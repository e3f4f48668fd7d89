import { billable, snapshotOf, type Usage } from '../pricing/index.js';
import { unchanged, type Alert, type Decision, type Intent } from './decision.js';
import type { Extension } from './growth.js';
import type { JobView } from './job-view.js';
import { settlementKey } from './keys.js';

/**
 * Resolve the hold by charging `usage`: the billable amount (capped at the
 * reservation) is posted and the remainder voided in the same settlement.
 */
export function captureDecision(job: JobView, usage: Usage, highestCorrection: number): Decision {
  const charge = billable(job.priceBook, usage, job.reserved);
  const key = settlementKey(job.tenantId, job.id, 'capture', 1);
  return {
    ...unchanged(job),
    nextState: 'captured',
    intents: [
      {
        kind: 'capture',
        key,
        amount: charge.amount,
        remainder: job.reserved - charge.amount,
        snapshot: snapshotOf(job.priceBook, usage, job.reserved),
        posting: { kind: 'capture', amount: charge.amount },
      },
    ],
    outcome: { status: 'applied', raises: exceeds(charge.exceedsReservation) },
    highestCorrection,
    totals: { captured: charge.amount, released: job.reserved - charge.amount, adjusted: job.adjusted },
    effectKey: key,
  };
}

/** Resolve the hold by voiding all of it. */
export function releaseDecision(job: JobView, reason: string): Decision {
  const key = settlementKey(job.tenantId, job.id, 'release', 1);
  return {
    ...unchanged(job),
    nextState: 'released',
    intents: [{ kind: 'release', key, amount: job.reserved, reason, posting: { kind: 'release' } }],
    outcome: { status: 'applied', reason, raises: [] },
    totals: { captured: 0n, released: job.reserved, adjusted: job.adjusted },
    effectKey: key,
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
  const key = settlementKey(job.tenantId, job.id, 'adjustment', correction);
  const amount = charge.amount - chargedSoFar;
  return {
    ...unchanged(job),
    nextState: job.state,
    intents: [
      {
        kind: 'adjustment',
        key,
        version: correction,
        amount,
        snapshot: snapshotOf(job.priceBook, usage, job.reserved),
        posting: { kind: 'adjustment', version: correction, amount },
      },
    ],
    outcome: { status: 'applied', raises: exceeds(charge.exceedsReservation) },
    highestCorrection: correction,
    totals: { captured: job.captured, released: job.released ?? null, adjusted: job.adjusted + amount },
    effectKey: key,
  };
}

/** The intent that holds an extension (growth.ts) before the rest of its decision. */
export function extensionIntent(extension: Extension): Intent {
  const { key, version, amount, limits, source, mayOwe } = extension;
  return { kind: 'extension', key, version, amount, limits, source, posting: { kind: 'extension', version, amount, mayOwe } };
}

function exceeds(exceedsReservation: boolean): Alert[] {
  return exceedsReservation ? ['usage_exceeds_reservation'] : [];
}
