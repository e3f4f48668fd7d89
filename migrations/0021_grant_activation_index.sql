-- The activation sweep (src/duties/grant-duties.ts selectActivationDue) walks the grants
-- not yet active, in the order they take effect: a partial index of exactly those, so the
-- walk every 2 s reads the few scheduled grants instead of every grant ever made.
create index grants_activation_due_idx on grants (effective_at, id)
  where activated_at is null and voided_at is null and canceled_at is null;
