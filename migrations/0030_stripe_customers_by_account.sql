-- Issue 33, item 10: a tenant's Stripe customer belongs to the Stripe account that created
-- it. stripe_customers was keyed by (tenant, livemode) alone, so after the operator put
-- another account's API key, checkouts named the old account's customer (Stripe answers
-- "No such customer", so the tenant could never top up again) and recharges charged a
-- payment method the new account does not have.
--
-- payment_settings.key_account names the account the API key belongs to: its id (acct_…)
-- as GET /v1/account answers it when the key is put, or 'key:' and a fingerprint of the key
-- when Stripe does not say (src/funds/payments/key-account.ts). Each customer row keeps
-- the key_account it was created under, and is used only while the settings name the same.
--
-- Rows from before this migration: the account is unknown, and was the configured one.
-- Both sides get one marker, so they keep matching until a key of another account (or a
-- key whose account cannot be told apart) is put; then a new customer is created at the
-- tenant's next checkout, and until then blocked_reason says `no_payment_method`.
alter table payment_settings add column key_account text;
update payment_settings set key_account = 'before-0030' where key_account is null;
alter table payment_settings alter column key_account set not null;

alter table stripe_customers add column key_account text;
update stripe_customers set key_account = 'before-0030' where key_account is null;
alter table stripe_customers alter column key_account set not null;

alter table stripe_customers
  drop constraint stripe_customers_pkey,
  add constraint stripe_customers_pkey primary key (tenant_id, livemode, key_account);
