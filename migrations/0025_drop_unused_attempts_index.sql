-- delivery_attempts_event_idx (provider, event_key) served no query: a job's deliveries are
-- read by job (delivery_attempts_job_idx), reconciliation's conflicts and mismatches by
-- outcome (delivery_attempts_outcome_idx), and a delivery's own key is looked up in
-- webhook_events. Every delivery (three per job in the benchmark) paid an entry in it
-- (bench/RESULTS.md, round three: "the indexes of the hot tables").
drop index delivery_attempts_event_idx;
