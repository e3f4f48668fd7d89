import type { Queryable } from '../db/pool.js';

/**
 * THE AUDITOR'S reading of what an entry does to the pending and posted columns of the
 * accounts it names, in SQL on purpose, apart from the kernel's (funds/posting
 * entry-effects.ts projectionDelta): the reconciliation's projection_drift check compares
 * the projection the writer moved with it, and its repair rebuilds from it (see
 * reconcile/checks/running-balances.ts). test/integration/auditor-agrees.test.ts compares
 * them for every flag.
 */
export const AUDITOR_PENDING_CHANGE = `case flags when 'pending' then amount when 'posted' then 0 else -amount end`;
export const AUDITOR_POSTED_CHANGE = `case when flags in ('posted', 'post_pending') then amount else 0 end`;

/**
 * SQL for each account's four balance columns summed from the immutable entries (all
 * accounts, or the one `accountParam` names): what the projection must equal. The
 * reconciliation compares with it (its projection_drift check); rebuildProjection writes it.
 */
export function projectionFromEntries(accountParam?: string): string {
  const debit = accountParam ? `where debit_account_id = ${accountParam}` : '';
  const credit = accountParam ? `where credit_account_id = ${accountParam}` : '';
  return `
  select account_id,
         sum(debits_pending) as debits_pending, sum(debits_posted) as debits_posted,
         sum(credits_pending) as credits_pending, sum(credits_posted) as credits_posted
  from (
    select debit_account_id as account_id,
           ${AUDITOR_PENDING_CHANGE} as debits_pending,
           ${AUDITOR_POSTED_CHANGE} as debits_posted,
           0::bigint as credits_pending, 0::bigint as credits_posted
    from ledger_entries ${debit}
    union all
    select credit_account_id,
           0, 0,
           ${AUDITOR_PENDING_CHANGE},
           ${AUDITOR_POSTED_CHANGE}
    from ledger_entries ${credit}
  ) movements
  group by account_id`;
}

/**
 * Rebuilds an account's projection from its entries (reconciliation's repair of
 * projection_drift), in the caller's transaction. The account is locked first, so no
 * settlement moves it while we sum. Read committed: the sums see every entry committed
 * before the lock was granted, and a settlement still to come waits for this lock, then
 * adds its own deltas.
 */
export async function rebuildProjection(tx: Queryable, accountId: string): Promise<void> {
  await tx.query('select id from accounts where id = $1 for update', [accountId]);
  await tx.query(
    `update accounts a set
       debits_pending = coalesce(s.debits_pending, 0), debits_posted = coalesce(s.debits_posted, 0),
       credits_pending = coalesce(s.credits_pending, 0), credits_posted = coalesce(s.credits_posted, 0)
     from (select $1::uuid as id) target left join (${projectionFromEntries('$1')}) s on s.account_id = target.id
     where a.id = target.id`,
    [accountId],
  );
}
