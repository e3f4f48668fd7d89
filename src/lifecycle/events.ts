import type { Usage } from '../pricing/index.js';

/**
 * What can happen to a job, already verified and resolved to it by the shell.
 * The `job.*` events come from providers (after adapter mapping); the others
 * come from the tenant API and from periodic duties. No event carries an
 * amount: amounts are always computed from usage and the pinned price book.
 */
export type LifecycleEvent =
  | { readonly type: 'job.started' }
  /** `usage`: the job's usage so far (cumulative), when the report carries it */
  | { readonly type: 'job.progress'; readonly usage?: Usage }
  | { readonly type: 'job.completed'; readonly usage: Usage }
  | { readonly type: 'job.failed'; readonly usage?: Usage }
  | { readonly type: 'job.canceled'; readonly usage?: Usage }
  /** `correction` is the provider's correction number N, a positive integer. */
  | { readonly type: 'job.usage_corrected'; readonly usage: Usage; readonly correction: number }
  /** The tenant's POST /v1/jobs/{id}/cancel. */
  | { readonly type: 'cancel.requested' }
  /** The provider's cancel_grace_seconds passed while the job was cancel_requested. */
  | { readonly type: 'cancel.grace_elapsed' }
  /** Operator repair of a hold open past its expiry (reconcile --repair). */
  | { readonly type: 'hold.expired' }
  /**
   * A worker is about to fetch a terminal event's usage from the provider's API (named
   * adapters whose webhooks carry none): the job waits in `usage_pending`.
   */
  | { readonly type: 'usage.fetch_started' }
  /** The fetched provider object is not this job's (its id or model differ): nothing is billed. */
  | { readonly type: 'usage.mismatched' }
  /**
   * An operator's keyed adjustment (POST /v1/jobs/{id}/adjustments): the usage the job is
   * to be billed for (priced at its pinned version, like a provider's correction), and why.
   */
  | { readonly type: 'operator.adjusted'; readonly usage: Usage; readonly reason: string };

export type LifecycleEventType = LifecycleEvent['type'];

export const LIFECYCLE_EVENT_TYPES: readonly LifecycleEventType[] = [
  'job.started',
  'job.progress',
  'job.completed',
  'job.failed',
  'job.canceled',
  'job.usage_corrected',
  'cancel.requested',
  'cancel.grace_elapsed',
  'hold.expired',
  'usage.fetch_started',
  'usage.mismatched',
  'operator.adjusted',
];

/**
 * Events that lose to an accepted event of the job still waiting to settle (pending,
 * claimed, or dead-lettered for an operator): the shell reads that fact under the job's
 * row lock (JobView.eventAwaiting) only for these.
 */
export function yieldsToAwaitingEvents(event: LifecycleEvent): boolean {
  return event.type === 'cancel.grace_elapsed' || event.type === 'hold.expired';
}

/** An event that cannot be decided at all: a shell bug, not a business outcome. */
export class InvalidEventError extends Error {
  readonly code = 'invalid_event';

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidEventError';
  }
}
