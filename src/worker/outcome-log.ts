import { logSettlementWritten, type DecisionLog } from '../ledger/index.js';
import type { ClaimedEvent } from '../queue/index.js';
import type { EventOutcome } from './settle-event.js';

/**
 * The log line of what settling a claimed event decided, written after its outcome was
 * recorded (committed, or marked with the claim's token): a settlement written, a
 * retry, a dead letter, a lost claim, a provider object that is not the job's. Message
 * strings are stable (operators alert on them); fields are snake_case and name the
 * event, its job and tenant. The worker and reconciliation's re-drive both report here.
 */
export function logEventOutcome(log: DecisionLog, claim: ClaimedEvent, outcome: EventOutcome): void {
  const event = { event_id: claim.event_key, provider: claim.provider, job_id: claim.job_id, tenant_id: claim.tenant_id };
  switch (outcome.kind) {
    case 'settled':
      logSettlementWritten(log, outcome.result, { provider: claim.provider, eventKey: claim.event_key });
      return;
    case 'dead':
      // claim.attempts counts this attempt: the claim that failed took it.
      log.error(
        { ...event, event_type: claim.type, attempts: claim.attempts, last_error: errorText(outcome.error), err: outcome.error },
        'event dead-lettered',
      );
      return;
    case 'retry':
      log.warn({ ...event, attempts: claim.attempts, last_error: errorText(outcome.error), err: outcome.error }, 'settlement failed; will retry');
      return;
    case 'lease_lost':
      log.warn(event, 'claim lost: the lease expired and another worker owns the event; this attempt wrote nothing');
      return;
    case 'usage_mismatch':
      log.warn({ ...event, code: 'event_mismatch', field: outcome.field }, "the provider's object is not the job's; nothing billed");
      return;
  }
}

/** As settle-event.ts stores it in last_error. */
function errorText(error: Error): string {
  return `${error.name}: ${error.message}`;
}
