import { InvalidEventError, type LifecycleEvent } from '../lifecycle/index.js';
import type { Usage } from '../pricing/index.js';
import type { CanonicalEvent } from '../webhooks/canonical-event.js';
import type { ClaimedEvent, StoredEvent } from './types.js';

/**
 * The forms of an event, and the one way between each pair: the canonical event a
 * provider's adapter makes of a webhook (webhooks/) → the stored event intake keeps in
 * webhook_events.event → the lifecycle event decide() settles. Nothing else converts them.
 */

/** What the worker needs to settle: the lifecycle event, nothing from the raw payload. */
export function storedEventOf(event: CanonicalEvent): StoredEvent {
  return {
    type: event.type,
    ...(event.usage !== undefined ? { usage: event.usage } : {}),
    ...(event.correction !== undefined ? { correction: event.correction } : {}),
    ...(event.fetchUsage ? { fetch_usage: true } : {}),
    ...(event.fetchUsage && event.usageResource !== undefined ? { usage_resource: event.usageResource } : {}),
  };
}

/**
 * The usage an event settles with: the webhook's own; the one fetched from the
 * provider's API (named adapters; null when it reported none); or none, because the job's
 * hold is resolved already and decide() records the event as no effect without reading
 * any (so none is fetched; terminal states are final, so this cannot race).
 */
export type AcceptedUsage = { from: 'webhook' } | { from: 'fetched'; usage: Usage | null } | { from: 'not_fetched' };

/** The types whose usage a named adapter fetches. */
const FETCHED_TYPES: readonly string[] = ['job.completed', 'job.failed', 'job.canceled'];

/**
 * THE stored → lifecycle conversion. A stored event that cannot be one (a completion
 * without usage, a correction without its number, an unknown type) is an
 * InvalidEventError: no retry can fix it, so the worker dead-letters it at once.
 */
export function lifecycleEventOf(event: StoredEvent, eventKey: string, accepted: AcceptedUsage = { from: 'webhook' }): LifecycleEvent {
  const type = event.type;
  if (accepted.from !== 'webhook' && !FETCHED_TYPES.includes(type)) {
    throw new InvalidEventError(`event ${eventKey} of type ${type} does not fetch usage`);
  }
  const usage = accepted.from === 'webhook' ? event.usage : accepted.from === 'fetched' ? (accepted.usage ?? undefined) : undefined;
  switch (type) {
    case 'job.started':
      return { type };
    case 'job.progress':
      return usage ? { type, usage } : { type };
    case 'job.completed':
      if (accepted.from === 'not_fetched') return { type, usage: {} };
      if (!usage) throw new InvalidEventError(`event ${eventKey} is a completion without usage`);
      return { type, usage };
    case 'job.failed':
    case 'job.canceled':
      return usage ? { type, usage } : { type };
    case 'job.usage_corrected':
      if (!usage || !event.correction) throw new InvalidEventError(`event ${eventKey} is a correction without usage or number`);
      return { type, usage, correction: event.correction };
    default:
      throw new InvalidEventError(`event ${eventKey} has unknown type ${type}`);
  }
}

/** A claimed event's lifecycle event, with the usage as accepted: fetched when stored on the event, else the webhook's. */
export function claimedLifecycleEvent(claim: Pick<ClaimedEvent, 'event' | 'event_key' | 'usage'>): LifecycleEvent {
  return lifecycleEventOf(claim.event, claim.event_key, claim.usage !== null ? { from: 'fetched', usage: claim.usage } : { from: 'webhook' });
}
