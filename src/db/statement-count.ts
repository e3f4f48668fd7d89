import type pg from 'pg';

/**
 * Statements this process sent to PostgreSQL, counted at the driver: every client.query
 * of every pool of createPool (BEGIN and COMMIT included), so round trips per job are
 * known on any server — pg_stat_statements needs a preloaded extension many managed
 * servers lack. Exported as tally_db_statements_total (docs/operations/metrics.md).
 */
export const statementCount = { statements: 0, commits: 0 };

/** Wraps one client's query so that each call is counted (pool.ts, at connect). */
export function countStatements(client: pg.PoolClient | pg.Client): void {
  const query = client.query;
  client.query = function countedQuery(this: unknown, ...args: unknown[]) {
    statementCount.statements++;
    const first = args[0];
    const text = typeof first === 'string' ? first : (first as { text?: unknown } | null)?.text;
    if (typeof text === 'string' && text.length === 6 && text.toLowerCase() === 'commit') statementCount.commits++;
    return (query as (...a: unknown[]) => unknown).apply(client, args);
  } as typeof client.query;
}
