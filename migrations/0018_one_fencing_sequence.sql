-- One sequence for the fencing tokens of every queue (src/queue/engine/): outbound
-- deliveries took theirs from outbound_claim_tokens, and now take them from
-- fencing_tokens, like webhook events. fencing_tokens is first moved past every token the
-- old sequence gave, so a delivery claimed before this migration can never share its token
-- with a claim made after it (a fenced write would then take one claim for the other). The
-- rows are kept as they are: a delivery still claimed under an old token is finished under
-- it, or its lease lapses and it is claimed again, as before.
select setval('fencing_tokens', greatest(
  (select last_value from fencing_tokens),
  (select last_value from outbound_claim_tokens)
));
drop sequence outbound_claim_tokens;
