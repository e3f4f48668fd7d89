import type { FencedClaim, QueueTable } from './engine/index.js';
import { UNSETTLED_STATES, unsettledSql } from './states.js';
import type { ClaimedEvent, EventClaim } from './types.js';

/**
 * webhook_events as a queue of the engine (engine/table.ts). What is its own:
 * - per-job order: an event is eligible only when no earlier event of its job is still
 *   unsettled, so a job's events settle in the order intake numbered them, and one
 *   waiting in backoff holds back only its own job;
 * - one tenant per claim: the first ready event names the tenant, the batch is that
 *   tenant's ready events (webhook_events_tenant_claim_idx, migrations/0022), so the
 *   batches of concurrent loops lock different wallets (bench/RESULTS.md, round three);
 * - the walk in (run_after, seq), the order of webhook_events_claim_order_idx
 *   (migrations/0016), so the claim stops at its limit (test/integration/claim-plan.test.ts);
 * - planned at every call: a prepared claim kept the plan it got when the table was small,
 *   and under a growing backlog that plan read and sorted every ready event (140–460 ms
 *   per claim at 2,700–6,000 open events, against 1–6 ms planned fresh; bench/RESULTS.md);
 * - attempts counted at the claim: taking over a claim whose lease ran out continues the
 *   attempt its lost holder never finished, so claims lost to a slow step or a dead
 *   worker never add up to a dead letter (issue 11.5).
 */
export const EVENTS_TABLE: QueueTable = {
  name: 'events',
  table: 'webhook_events',
  key: [
    { column: 'provider', type: 'text' },
    { column: 'event_key', type: 'text' },
  ],
  states: { column: 'state', claimable: UNSETTLED_STATES, claimed: 'processing', retry: 'pending', dead: 'dead' },
  lease: 'lease_until',
  leaseMirror: null,
  token: 'fencing_token',
  due: 'run_after',
  attempts: { column: 'attempts', counted: 'at_claim' },
  error: 'last_error',
  deadAlso: "reason = 'dead_lettered'",
  claim: {
    eligible: `not exists (
           select 1 from webhook_events earlier
           where earlier.job_id = c.job_id and earlier.seq < c.seq and ${unsettledSql('earlier')})`,
    order: 'c.run_after, c.seq',
    group: 'tenant_id',
    join: null,
    returning: 'w.provider, w.event_key, w.tenant_id, w.job_id, w.seq, w.type, w.event, w.usage, w.attempts, w.fencing_token',
    plan: 'per_call',
  },
};

/** A claimed event as the engine's fenced writes name it. */
export function fencedEvent(claim: ClaimedEvent | EventClaim): FencedClaim {
  return 'fencing_token' in claim
    ? { key: [claim.provider, claim.event_key], token: claim.fencing_token }
    : { key: [claim.provider, claim.eventKey], token: claim.fencingToken };
}
