-- A refund or a dispute whose currency is not its payment's posts nothing (CONTRACT.md
-- "Payments (Stripe)", Edges): it is kept with why, and reconciliation names it as a
-- payment_mismatch. Null for every refund and dispute that was applied.
alter table stripe_refunds add column mismatch text;
alter table stripe_disputes add column mismatch text;
