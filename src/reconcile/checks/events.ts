import { unsettledSql } from '../../queue/index.js';
import { amount, secondsSince, type Check } from './check.js';

/** An event pending or claimed for longer than this is stuck. */
export const EVENT_STUCK_SECONDS = 300;

export const eventStuck: Check = {
  class: 'event_stuck',
  covers: 'webhook_events',
  sql: `select e.provider || '/' || e.event_key as key,
               jsonb_build_object('provider', e.provider, 'event_key', e.event_key, 'job_id', e.job_id) as objects,
               jsonb_build_object('state', e.state, 'attempts', e.attempts, 'received_at', e.received_at, 'last_error', e.last_error) as detail
        from webhook_events e
        where ${unsettledSql('e')} and e.received_at < now() - make_interval(secs => ${EVENT_STUCK_SECONDS})`,
};

/**
 * A dead event keeps its job's hold open (cancel grace and expiry wait for it), so
 * each one reports the funds held behind it and for how long: `held` is the job's
 * open hold (null once resolved), until an operator retries or discards the event.
 */
export const eventDead: Check = {
  class: 'event_dead',
  covers: 'webhook_events',
  sql: `select e.provider || '/' || e.event_key as key,
               jsonb_build_object('provider', e.provider, 'event_key', e.event_key, 'job_id', e.job_id) as objects,
               jsonb_build_object('attempts', e.attempts, 'last_error', e.last_error,
                 'dead_lettered_at', e.dead_lettered_at, 'dead_for_seconds', ${secondsSince('e.dead_lettered_at')},
                 'held', case when h.job_id is null then null else jsonb_build_object(
                   'amount', ${amount('h.amount')}, 'currency', h.currency, 'wallet_id', h.wallet_id,
                   'held_since', h.created_at, 'held_for_seconds', ${secondsSince('h.created_at')}, 'expires_at', h.expires_at) end) as detail
        from webhook_events e
        left join holds h on h.job_id = e.job_id and h.resolved_by is null
        where e.state = 'dead'`,
};

export const eventKeyConflict: Check = {
  class: 'event_key_conflict',
  covers: 'delivery_attempts',
  sql: `select d.provider || '/' || d.event_key as key,
               jsonb_build_object('provider', d.provider, 'event_key', d.event_key, 'job_id', min(d.job_id::text)) as objects,
               jsonb_build_object('deliveries', count(*), 'last_received_at', max(d.received_at)) as detail
        from delivery_attempts d where d.outcome = 'event_key_conflict'
        group by d.provider, d.event_key`,
};

export const eventMismatch: Check = {
  class: 'event_mismatch',
  covers: 'delivery_attempts',
  sql: `select d.provider || '/' || d.event_key as key,
               jsonb_build_object('provider', d.provider, 'event_key', d.event_key, 'job_id', min(d.job_id::text)) as objects,
               jsonb_build_object('deliveries', count(*), 'mismatch', min(d.detail->>'mismatch')) as detail
        from delivery_attempts d where d.outcome = 'event_mismatch'
        group by d.provider, d.event_key`,
};
