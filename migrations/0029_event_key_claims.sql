-- A provider's event key names one event, whatever tenant its job belongs to (CONTRACT.md
-- "Webhooks": event keys are unique per provider; the same key with other bytes is 409
-- event_key_conflict). Since 0023 webhook_events_pkey is (provider, event_key, tenant_id),
-- so it no longer says so: two concurrent deliveries of one key whose bodies name two
-- tenants' jobs could both be accepted, and both billed. The key cannot go back into that
-- primary key without tenant_id: Citus enforces a key only inside one shard, and the events
-- are distributed by tenant (docs/operations/scaling.md).
--
-- So a key is claimed in a table of its own, keyed by (provider, event_key) alone: intake's
-- statement inserts the claim and the event together and writes the event only when its
-- claim was inserted (src/queue/enqueue.ts). The loser of a race waits for the winner's
-- commit on this primary key, inserts nothing, and is answered from the winner's event.
-- On Citus the table is distributed by event_key in a co-location group of its own
-- (src/db/distribution.ts), so the key stays unique across the cluster.
--
-- tenant_id is whose event holds the key: where to find the event without asking every
-- shard. No foreign key: the events are distributed by tenant and this table by key, and
-- Citus keeps no foreign key between tables that are not co-located.
create table webhook_event_keys (
  provider text not null,
  event_key text not null,
  tenant_id uuid not null
);

-- Held until this commits, so that no event is inserted between the copy below and the
-- commit without its claim (a release still running inserts events, never claims). SHARE
-- lets reads through; writes to webhook_events (intake's inserts, the workers' marks) wait
-- for one scan, one copy and one index build. After the commit, a receiver of the release
-- before still writes events without claims: until every receiver runs this one, a race
-- it takes part in is not held to the rule (a delivery arriving later still finds the
-- event and is refused, as before).
lock table webhook_events in share mode;

-- Keys already held by the events of two or more tenants stop the migration, naming the
-- count and a few of them; nothing is applied. Which tenant keeps a key is a billing
-- question (one of the two may have been charged for the other's delivery), not one a
-- migration may answer by dropping or re-keying an event.
do $$
declare
  shared bigint;
  examples text;
begin
  select count(*), string_agg(format('%s/%s (%s tenants)', provider, event_key, tenants), ', ' order by provider, event_key)
             filter (where rank <= 5)
    into shared, examples
  from (select provider, event_key, count(*) as tenants, row_number() over (order by provider, event_key) as rank
        from webhook_events
        group by provider, event_key
        having count(*) > 1) as keys;
  if shared > 0 then
    raise exception '% event key(s) are held by the events of more than one tenant of their provider (e.g. %); an event key names one event, and each of these may be one delivery billed to two tenants. Look into them (the jobs'' settlements), settle which event keeps each key, then migrate again', shared, examples;
  end if;
end $$;

-- Every event's key is claimed by its event's tenant. The primary key is added after the
-- copy: one sorted index build instead of one insertion per row.
insert into webhook_event_keys (provider, event_key, tenant_id)
select provider, event_key, tenant_id from webhook_events;

alter table webhook_event_keys add constraint webhook_event_keys_pkey primary key (provider, event_key);
