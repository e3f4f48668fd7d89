-- Issue 33, items 7 and 9 (CONTRACT.md "Payments (Stripe)", Edges; docs/payments.md).
--
-- 1. The operator's Stripe account, optional. A Stripe event whose top-level `account` is
--    set comes from a Connect account: intake (src/intake/stripe-receive.ts) and `tally
--    payments sync` store it as refused, answered 400 connect_account_refused, unless it
--    names this account (an extension for a Tally run on a connected account's behalf).
--    Null, as every row before this migration: every event naming an account is refused.
alter table payment_settings add column account text
  constraint payment_settings_account_format check (account ~ '^acct_[A-Za-z0-9]{1,250}$');

-- 2. Events naming an account received before this migration, not applied yet: refused
--    now, so no worker applies them after the upgrade (no account could be configured
--    before, so each of them is refused). Only what PostgreSQL can read as JSON is looked
--    at: intake stored the bytes Stripe's SDK parsed, and one jsonb refuses (a \u0000 in a
--    string) is left as it was rather than stopping the migration. The claim's lease and
--    fencing token are cleared: a worker of the previous version still holding it cannot
--    mark it (its fenced write finds no row), so its settle transaction rolls back; one
--    that committed first made the row applied, and the row lock makes this loop skip it.
do $$
declare
  e record;
  named jsonb;
begin
  for e in select id, payload from stripe_events where state in ('pending', 'processing') order by id for update loop
    begin
      named := convert_from(e.payload, 'UTF8')::jsonb -> 'account';
    exception when others then
      named := null;
    end;
    if named is not null and jsonb_typeof(named) <> 'null' then
      update stripe_events
        set state = 'refused', reason = 'connect_account_refused', lease_until = null, fencing_token = null, waiting_since = null
        where id = e.id;
    end if;
  end loop;
end $$;

-- 3. Webhook signing secrets (providers.secrets, payment_settings.webhook_secrets) are
--    sealed from now on, each element on its own: 'sealed:v1:' then base64 of AES-256-GCM
--    under a key derived from the server's secret (src/sealed-secrets.ts), like the Stripe
--    API key. SQL cannot seal them here: the key is not in the database, by design. So the
--    code reads both forms (a value without the prefix is clear, as written before) and
--    `tally serve` and `tally worker`, which hold the server's secret, seal the clear ones
--    at start (src/cli/seal-at-start.ts). Nothing to change in the schema for that.
