import { expect } from 'vitest';
import type { Queryable } from '../../src/db/pool.js';
import type { Answer } from './client.js';
import { ledgerViolations } from './invariants.js';

/**
 * CONTRACT.md: every error body is exactly {"error": {"code", "message"}} with a stable
 * snake_case code, plus (docs/CONTRACT.md) `param`, the field at fault, when there is
 * one. Fails with the whole answer, so a wrong status shows its body.
 */
export function expectError(answer: Answer, status: number, code: string): void {
  const param = answer.body?.error?.param;
  expect({ status: answer.status, body: answer.body }, JSON.stringify(answer.body)).toEqual({
    status,
    body: { error: { code, message: expect.any(String), ...(param === undefined ? {} : { param: expect.any(String) }) } },
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
  return (await ledgerViolations(db)).projection_equals_entries ?? [];
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
