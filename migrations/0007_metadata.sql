-- Free-form metadata on tenants, wallets and jobs: the client's own labels (an order
-- id, a customer name), stored and returned, never interpreted. An object of string
-- values, at most 50 keys (the API checks key and value lengths; the checks here keep
-- a hand-written insert from storing something the API could not return).
alter table tenants add column metadata jsonb not null default '{}';
alter table accounts add column metadata jsonb not null default '{}';
alter table jobs add column metadata jsonb not null default '{}';
alter table tenants add constraint tenants_metadata_shape check (jsonb_typeof(metadata) = 'object');
alter table accounts add constraint accounts_metadata_shape check (jsonb_typeof(metadata) = 'object');
alter table jobs add constraint jobs_metadata_shape check (jsonb_typeof(metadata) = 'object');
