import type { Usage } from '../pricing/index.js';
import { alreadyResolved, noIntents, type Alert, type Decision } from './decision.js';
import { InvalidEventError, yieldsToAwaitingEvents, type LifecycleEvent } from './events.js';
import { growOnCapture, growOnReport } from './growth.js';
import { adjustmentDecision, captureDecision, extensionIntent, releaseDecision } from './intents.js';
import { assertJobView, type JobView } from './job-view.js';
import { settlementKey } from './keys.js';
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
  // An accepted event still waiting to settle (or dead-lettered, for an operator to
  // retry) wins over the cancel grace and over a hold's expiry.
  if (yieldsToAwaitingEvents(event) && job.eventAwaiting === true) return noIntents(job, 'no_effect', 'event_pending');
  switch (event.type) {
    case 'job.started':
      return onProgress(job);
    case 'job.progress':
      return onProgress(job, { usage: event.usage });
    case 'job.completed':
      return resolve(job, { capture: event.usage }, job.state === 'released' ? ['late_success_after_release'] : []);
    case 'job.failed':
      // Failed work is free unless the provider's policy says its usage is billed.
      return resolve(
        job,
        policy.failedWithUsage === 'capture' && event.usage !== undefined ? { capture: event.usage } : { release: 'job_failed' },
      );
    case 'job.canceled':
      // Work done before a cancel is still work done: reported usage is charged.
      return event.usage !== undefined
        ? resolve(job, { capture: event.usage }, job.state === 'released' ? ['late_usage_after_release'] : [])
        : resolve(job, { release: 'job_canceled' });
    case 'job.usage_corrected':
      return onCorrection(job, event.usage, event.correction);
    case 'cancel.requested':
      return onCancelRequested(job);
    case 'cancel.grace_elapsed':
      if (job.state === 'cancel_requested' || isTerminal(job.state)) return resolve(job, { release: 'cancel_grace_elapsed' });
      return noIntents(job, 'no_effect', 'not_cancel_requested');
    case 'hold.expired':
      return resolve(job, { release: 'hold_expired' });
    case 'usage.fetch_started':
      return onFetchStarted(job);
    case 'usage.mismatched':
      return onUsageMismatch(job);
    case 'operator.adjusted':
      return onOperatorAdjustment(job, event.usage, event.reason);
    default:
      return unknownEvent(event);
  }
}

/** How an event asks the open hold to be resolved: charge this usage, or void it all. */
type Resolution = { capture: Usage } | { release: string };

/**
 * The one place an event resolves a hold. A hold is resolved once: on a terminal job
 * the event is recorded as no effect, and its effect is the resolution only when that
 * is the one it asked for (a repeated completion returns the capture).
 */
function resolve(job: JobView, resolution: Resolution, lateAlerts: Alert[] = []): Decision {
  if (isTerminal(job.state)) return alreadyResolved(job, lateAlerts, 'capture' in resolution ? 'capture' : 'release');
  if ('capture' in resolution) return capture(job, resolution.capture, job.highestCorrection);
  // An event that ends in a release never extends; the job's end clears its exhausted state.
  const decision = releaseDecision(job, resolution.release);
  return { ...decision, growth: { ...decision.growth, holdExhausted: null } };
}

/**
 * A capturing terminal event: for a job with auto_extend, its usage first grows the hold
 * (never refused: the work is delivered), and the capture bills from the grown hold.
 */
function capture(job: JobView, usage: Usage, highestCorrection: number): Decision {
  const { extension, growth } = growOnCapture(job, usage);
  const decision = captureDecision({ ...job, reserved: growth.reserved }, usage, highestCorrection);
  return { ...decision, growth, intents: [...(extension ? [extensionIntent(extension)] : []), ...decision.intents] };
}

/**
 * A started or progress event. A progress report's usage is kept as usage so far and, for
 * a job with auto_extend, may extend the hold (the shell holds the extension, or says the
 * wallet refused it); any settled progress report moves the hold's expiry.
 */
function onProgress(job: JobView, progress?: { usage: Usage | undefined }): Decision {
  if (isTerminal(job.state)) return alreadyResolved(job);
  // Progress never moves a job backwards out of cancel_requested or usage_pending.
  const decision =
    job.state === 'reserved' ? noIntents(job, 'applied', undefined, [], 'running') : noIntents(job, 'applied', 'state_unchanged');
  if (!progress) return decision;
  const { extension, growth } = growOnReport(job, progress.usage);
  return { ...decision, growth, intents: extension ? [extensionIntent(extension)] : [] };
}

function onCorrection(job: JobView, usage: Usage, correction: number): Decision {
  if (!Number.isSafeInteger(correction) || correction < 1) {
    throw new InvalidEventError(`job.usage_corrected needs a positive integer correction, got ${correction}`);
  }
  // A correction before any completion is the completion.
  if (!isTerminal(job.state)) return capture(job, usage, correction);
  // A repeated correction's effect is the adjustment it made the first time, if any.
  const repeat = (decision: Decision): Decision => ({
    ...decision,
    effectKey: settlementKey(job.tenantId, job.id, 'adjustment', correction),
  });
  if (job.state === 'released') return repeat(alreadyResolved(job, ['late_usage_after_release']));
  // Corrections may arrive out of order; only one newer than all applied counts.
  if (correction <= job.highestCorrection) return repeat(noIntents(job, 'stale', 'correction_not_newer'));
  return adjustmentDecision(job, usage, correction);
}

function onCancelRequested(job: JobView): Decision {
  if (isTerminal(job.state)) return noIntents(job, 'rejected', 'job_terminal');
  // Usage is being fetched for a terminal event: that event wins over the cancel. The
  // cancel is still recorded: if the fetched usage turns out not to be the job's, it stands.
  const recordsCancel = job.cancelRequested !== true;
  if (job.state === 'usage_pending') return { ...noIntents(job, 'applied', 'completion_in_progress'), recordsCancel };
  const reason = job.state === 'cancel_requested' ? 'cancel_already_requested' : undefined;
  return { ...noIntents(job, 'applied', reason, [], 'cancel_requested'), recordsCancel };
}

/**
 * The job waits in usage_pending while a worker fetches a terminal event's usage,
 * remembering where it was. A job already usage_pending is that same event's earlier
 * attempt (a job's events settle one at a time, in order): its resume state is kept.
 * On a terminal job nothing is fetched: the event settles as no effect.
 */
function onFetchStarted(job: JobView): Decision {
  if (isTerminal(job.state)) return alreadyResolved(job);
  if (job.state === 'usage_pending') return noIntents(job, 'applied', 'state_unchanged');
  return { ...noIntents(job, 'applied', undefined, [], 'usage_pending'), resumeState: job.state };
}

/**
 * The fetched object is not this job's: nothing is billed, the hold stays open, and the
 * job goes back where the fetch found it — to cancel_requested when the tenant cancelled
 * meanwhile (the terminal event that won over the cancel turned out not to be the job's).
 */
function onUsageMismatch(job: JobView): Decision {
  const back = job.resumeState ?? null;
  if (job.state !== 'usage_pending' || back === null) return noIntents(job, 'no_effect', 'event_mismatch');
  const cancelStands = job.cancelRequested === true && (back === 'reserved' || back === 'running');
  return { ...noIntents(job, 'no_effect', 'event_mismatch', [], cancelStands ? 'cancel_requested' : back), resumeState: null };
}

/**
 * An operator bills what reconciliation showed was not billed (a usage_mismatch, a
 * late_success_after_release): the job's total charge is brought to billable(usage), as a
 * provider's correction would, under the next correction number — on a released job too
 * (work delivered after its release). A provider's correction numbered at or below it is
 * then stale; one above it applies as usual. Before the hold is resolved there is nothing
 * to adjust: the job's capture bills its usage.
 */
function onOperatorAdjustment(job: JobView, usage: Usage, reason: string): Decision {
  if (!isTerminal(job.state)) return noIntents(job, 'rejected', 'job_not_terminal');
  const decision = adjustmentDecision(job, usage, job.highestCorrection + 1);
  const why = `operator: ${reason}`;
  return {
    ...decision,
    intents: decision.intents.map((intent) => (intent.kind === 'adjustment' ? { ...intent, reason: why } : intent)),
    outcome: { ...decision.outcome, reason: why },
  };
}

function unknownEvent(event: never): never {
  const type = (event as { type?: unknown }).type;
  throw new InvalidEventError(`unknown lifecycle event type ${JSON.stringify(type)}`);
}

