-- fal signs every customer's webhooks with the same keys (one public JWKS): a valid
-- signature proves a webhook came from fal, not that it is for this operator's account.
-- The operator's fal user id, when set, is compared with X-Fal-Webhook-User-Id (which
-- the signature covers). Not secret: shown in the provider view. Optional, as the
-- contract does not require it; only fal providers take it.
alter table providers add column user_id text;
alter table providers add constraint providers_user_id_shape
  check (user_id is null or (kind = 'fal' and user_id ~ '^[!-~]{1,200}$'));
