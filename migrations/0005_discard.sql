-- An operator may set a dead-lettered event aside for good (POST /v1/events/{provider}/{key}/discard,
-- tally discard): its error is permanent, and a retry would only re-queue it into the same
-- error. A discarded event is terminal and no longer waits to settle, so its job's hold is
-- released by the normal keyed paths (cancel grace, hold expiry + reconcile --repair),
-- which wait only for pending, processing and dead events.
alter table webhook_events drop constraint webhook_events_state_known;
alter table webhook_events add constraint webhook_events_state_known
  check (state in ('pending', 'processing', 'applied', 'no_effect', 'stale', 'dead', 'discarded'));

-- Who set it aside, when and why. `discarded_by` is the principal ('admin' over HTTP,
-- 'cli:<os user>' from the command line): a column of its own, so per-operator tokens fit later.
alter table webhook_events add column discarded_by text;
alter table webhook_events add column discarded_at timestamptz;
alter table webhook_events add column discard_note text;
alter table webhook_events add constraint webhook_events_discard_recorded check (
  state <> 'discarded'
  or (length(discarded_by) between 1 and 200 and discarded_at is not null and length(discard_note) between 1 and 2000));

-- When an event was last dead-lettered, so reconciliation can say how long funds have
-- waited behind it. Set by a trigger on the transition itself rather than by each
-- writer: every path that dead-letters (the worker, a repair's re-drive) records it the
-- same way. Null for events dead-lettered before this migration.
alter table webhook_events add column dead_lettered_at timestamptz;
create function webhook_events_stamp_dead_lettered() returns trigger language plpgsql as $$
begin
  new.dead_lettered_at := now();
  return new;
end $$;
create trigger webhook_events_stamp_dead_lettered before update of state on webhook_events
  for each row when (new.state = 'dead' and old.state is distinct from 'dead')
  execute function webhook_events_stamp_dead_lettered();
