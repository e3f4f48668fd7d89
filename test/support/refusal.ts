import { expect } from 'vitest';
import type { Queryable } from '../../src/db/pool.js';
import type { Answer } from './client.js';

/**
 * CONTRACT.md: every error body is exactly {"error": {"code", "message"}} with a stable
 * snake_case code. Fails with the whole answer, so a wrong status shows its body.
 */
export function expectError(answer: Answer, status: number, code: string): void {
  expect({ status: answer.status, body: answer.body }, JSON.stringify(answer.body)).toEqual({
    status,
    body: { error: { code, message: expect.any(String) } },
  });
  expect(code).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
}

/** Row counts of the given tables: compared before and after a refusal, they prove nothing was written. */
export async function countRows<T extends string>(db: Queryable, tables: readonly T[]): Promise<Record<T, number>> {
  const counts = {} as Record<T, number>;
  for (const table of tables) {
    const result = await db.query<{ n: number }>(`select count(*)::int as n from ${table}`);
    counts[table] = result.rows[0]!.n;
  }
  return counts;
}

/** Rows whose projection columns differ from the sums over their ledger entries (none in a sound ledger). */
export async function projectionDrift(db: Queryable): Promise<unknown[]> {
  const result = await db.query(`
    with moves as (
      select debit_account_id as account,
             case flags when 'pending' then amount when 'posted' then 0 else -amount end as dp,
             case when flags in ('posted', 'post_pending') then amount else 0 end as dpo,
             0::bigint as cp, 0::bigint as cpo
      from ledger_entries
      union all
      select credit_account_id, 0, 0,
             case flags when 'pending' then amount when 'posted' then 0 else -amount end,
             case when flags in ('posted', 'post_pending') then amount else 0 end
      from ledger_entries
    ), sums as (
      select account, sum(dp) as dp, sum(dpo) as dpo, sum(cp) as cp, sum(cpo) as cpo from moves group by account
    )
    select a.id::text, a.kind,
           a.debits_pending::text, a.debits_posted::text, a.credits_pending::text, a.credits_posted::text,
           coalesce(s.dp, 0)::text as entries_dp, coalesce(s.dpo, 0)::text as entries_dpo,
           coalesce(s.cp, 0)::text as entries_cp, coalesce(s.cpo, 0)::text as entries_cpo
    from accounts a left join sums s on s.account = a.id
    where (a.debits_pending, a.debits_posted, a.credits_pending, a.credits_posted)
          is distinct from (coalesce(s.dp, 0), coalesce(s.dpo, 0), coalesce(s.cp, 0), coalesce(s.cpo, 0))`);
  return result.rows;
}

/** Runs `task` over `items` with at most `concurrency` in flight; results in input order. */
export async function mapConcurrent<T, R>(items: readonly T[], concurrency: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!, index);
    }
  });
  await Promise.all(lanes);
  return results;
}
