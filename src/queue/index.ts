/**
 * The event queue: the only owner of webhook_events. Intake enqueues (the outbox row);
 * workers claim, and every later write is fenced by the claim's token; operators re-queue
 * or discard dead letters. Nothing outside this folder writes the table. Claim, lease,
 * fencing, retry and dead letters are the queue engine's (engine/, used by outbound/ too);
 * events-table.ts describes webhook_events to it. Terms: types.ts and engine/table.ts.
 */
export { claimEvent, claimEvents, claimReadyStatement, extendLeases, lockReadyEvents, type LockedEvent } from './claim.js';
export { insertDeliveryAttempt } from './attempts.js';
export { queueDepth, type QueueDepth } from './depth.js';
export { deliveryKey, persistDeliveries, type AttemptRecord, type NewEvent } from './enqueue.js';
export { LeaseLost, eventLeaseLost } from './errors.js';
export { claimedLifecycleEvent, lifecycleEventOf, storedEventOf, type AcceptedUsage } from './event-forms.js';
export { EVENTS_TABLE, fencedEvent } from './events-table.js';
export { afterFailure, type AfterFailure, type FailedOutcome, type Failure, type RetryPolicy } from './engine/index.js';
export {
  deadLetter,
  markManySettled,
  markSettled,
  markedUnder,
  recordSettleFailure,
  readOwnedEvent,
  scheduleFetchRetry,
  scheduleRetry,
  storeFetchedUsage,
  type FetchState,
  type SettledMark,
} from './marks.js';
export {
  DISCARD_NOTE_MAX_LENGTH,
  discardDeadEvent,
  discardNoteProblem,
  requeueDead,
  requeueDeadEvent,
  type DiscardResult,
  type DiscardedEvent,
} from './operator.js';
export { awaitingEventOf, jobsWithAwaitingEvents } from './reads.js';
export {
  AWAITING_STATES,
  EVENT_STATES,
  SETTLED_STATES,
  UNSETTLED_STATES,
  awaitingSql,
  isAwaiting,
  isUnsettled,
  stateIn,
  unsettledSql,
  type EventState,
} from './states.js';
export { ERROR_TEXT_MAX_LENGTH, claimOf, type ClaimedEvent, type EventClaim, type StoredEvent } from './types.js';
export { EVENTS_CHANNEL, notifyWorkers, wakerFor } from './wake.js';
