import type { Usage } from '../pricing/index.js';
import { alreadyResolved, noIntents, type Decision } from './decision.js';
import { InvalidEventError, type LifecycleEvent } from './events.js';
import { adjustmentDecision, captureDecision, releaseDecision } from './intents.js';
import { assertJobView, type JobView } from './job-view.js';
import type { ProviderPolicy } from './policy.js';
import { isTerminal } from './states.js';

/**
 * The lifecycle table (CONTRACT "Job states and events") as one pure function.
 * The shell calls it on the locked job row and writes what it returns; an
 * event the table does not allow is a recorded outcome with a reason, never an
 * error. The only throws are for input no valid shell produces.
 */
export function decide(job: JobView, event: LifecycleEvent, policy: ProviderPolicy): Decision {
  assertJobView(job);
  switch (event.type) {
    case 'job.started':
    case 'job.progress':
      return onProgress(job);
    case 'job.completed':
      if (job.state === 'released') return alreadyResolved(job, ['late_success_after_release']);
      return isTerminal(job.state) ? alreadyResolved(job) : capture(job, event.usage);
    case 'job.failed':
      if (isTerminal(job.state)) return alreadyResolved(job);
      // Failed work is free unless the provider's policy says its usage is billed.
      return policy.failedWithUsage === 'capture' && event.usage !== undefined
        ? capture(job, event.usage)
        : releaseDecision(job, 'job_failed');
    case 'job.canceled':
      if (job.state === 'released' && event.usage !== undefined) {
        return alreadyResolved(job, ['late_usage_after_release']);
      }
      if (isTerminal(job.state)) return alreadyResolved(job);
      // Work done before a cancel is still work done: reported usage is charged.
      return event.usage !== undefined ? capture(job, event.usage) : releaseDecision(job, 'job_canceled');
    case 'job.usage_corrected':
      return onCorrection(job, event.usage, event.correction);
    case 'cancel.requested':
      return onCancelRequested(job);
    case 'cancel.grace_elapsed':
      if (job.state === 'cancel_requested') return releaseDecision(job, 'cancel_grace_elapsed');
      return isTerminal(job.state) ? alreadyResolved(job) : noIntents(job, 'no_effect', 'not_cancel_requested');
    case 'hold.expired':
      return isTerminal(job.state) ? alreadyResolved(job) : releaseDecision(job, 'hold_expired');
    default:
      return unknownEvent(event);
  }
}

function onProgress(job: JobView): Decision {
  if (isTerminal(job.state)) return alreadyResolved(job);
  if (job.state === 'reserved') return noIntents(job, 'applied', undefined, [], 'running');
  // Progress never moves a job backwards out of cancel_requested or usage_pending.
  return noIntents(job, 'applied', 'state_unchanged');
}

function capture(job: JobView, usage: Usage): Decision {
  return captureDecision(job, usage, job.highestCorrection);
}

function onCorrection(job: JobView, usage: Usage, correction: number): Decision {
  if (!Number.isSafeInteger(correction) || correction < 1) {
    throw new InvalidEventError(`job.usage_corrected needs a positive integer correction, got ${correction}`);
  }
  if (job.state === 'released') return alreadyResolved(job, ['late_usage_after_release']);
  // A correction before any completion is the completion.
  if (!isTerminal(job.state)) return captureDecision(job, usage, correction);
  // Corrections may arrive out of order; only one newer than all applied counts.
  if (correction <= job.highestCorrection) return noIntents(job, 'stale', 'correction_not_newer');
  return adjustmentDecision(job, usage, correction);
}

function onCancelRequested(job: JobView): Decision {
  if (isTerminal(job.state)) return noIntents(job, 'rejected', 'job_terminal');
  // Usage is being fetched for a terminal event: that event wins over the cancel.
  if (job.state === 'usage_pending') return noIntents(job, 'applied', 'completion_in_progress');
  const reason = job.state === 'cancel_requested' ? 'cancel_already_requested' : undefined;
  return noIntents(job, 'applied', reason, [], 'cancel_requested');
}

function unknownEvent(event: never): never {
  const type = (event as { type?: unknown }).type;
  throw new InvalidEventError(`unknown lifecycle event type ${JSON.stringify(type)}`);
}
