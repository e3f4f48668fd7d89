/**
 * Where a webhook event is in the queue (webhook_events.state; the column's check lists
 * the same). Named sets below, so no SQL string spells a list of states by hand.
 *
 *   pending ──claim──▶ processing ──settled──▶ applied | no_effect | stale
 *      ▲                  │  └──fails for good──▶ dead ──operator──▶ pending (retry) | discarded
 *      └──retry/backoff───┘
 */
export const EVENT_STATES = ['pending', 'processing', 'applied', 'no_effect', 'stale', 'dead', 'discarded'] as const;
export type EventState = (typeof EVENT_STATES)[number];

/** Not settled yet: claimable or claimed. Holds back the later events of its job (per-job order). */
export const UNSETTLED_STATES = ['pending', 'processing'] as const satisfies readonly EventState[];

/**
 * Still to be settled, by a worker or, once dead-lettered, by an operator: such an event
 * wins over the cancel grace and a hold's expiry, so the job's hold stays open for it.
 */
export const AWAITING_STATES = ['pending', 'processing', 'dead'] as const satisfies readonly EventState[];

/** Settled: what decide() made of it is recorded (webhook_events.reason, settlement_key). */
export const SETTLED_STATES = ['applied', 'no_effect', 'stale'] as const satisfies readonly EventState[];

export function isUnsettled(state: EventState): boolean {
  return (UNSETTLED_STATES as readonly EventState[]).includes(state);
}

export function isAwaiting(state: EventState): boolean {
  return (AWAITING_STATES as readonly EventState[]).includes(state);
}

/**
 * `alias.state in ('…', '…')` for SQL. Literals, not a parameter: the partial indexes
 * (webhook_events_claim_order_idx, _unsettled_by_job_idx) are used only when a query's
 * predicate spells their list, and these constants are not input.
 */
export function stateIn(alias: string | null, states: readonly EventState[]): string {
  const column = alias ? `${alias}.state` : 'state';
  return `${column} in (${states.map((s) => `'${s}'`).join(', ')})`;
}

/** SQL predicate: the event is unsettled (UNSETTLED_STATES). */
export const unsettledSql = (alias: string | null = null): string => stateIn(alias, UNSETTLED_STATES);
/** SQL predicate: the event is awaiting settlement (AWAITING_STATES). */
export const awaitingSql = (alias: string | null = null): string => stateIn(alias, AWAITING_STATES);
