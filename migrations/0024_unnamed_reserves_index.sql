-- Pending (reserve) entries that name no grant: the holds opened before grants (migrations/0019).
-- Reconciliation's grant_drift asks, for every capture and release naming a grant, whether
-- the reserve it resolves is one of these (src/reconcile/checks/grants.ts); probing the
-- ledger once per entry cost most of its 6 s at a million entries. This index holds only
-- those old entries: a reserve written since grants always names one, so it costs no
-- write of the settlement path anything.
create index ledger_entries_unnamed_reserves_idx on ledger_entries (id) where grant_id is null and flags = 'pending';
