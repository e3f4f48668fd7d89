-- The claim walks the ready events in its order, (run_after, seq), and stops once it has
-- its batch. With an index on run_after alone the planner had to sort by seq, and over a
-- backlog where most events are ready (a burst on a young table) it chose to read and
-- sort all of them for every claim (bench/RESULTS.md; test/integration/claim-plan.test.ts
-- checks the plan). An index in the claim's exact order makes the early stop the cheap
-- plan, prepared or not. It replaces the run_after one: every use of that is a prefix.
create index webhook_events_claim_order_idx on webhook_events (run_after, seq) where state in ('pending', 'processing');
drop index webhook_events_ready_idx;
