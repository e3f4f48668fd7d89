import type pg from 'pg';

/**
 * pg_stat_statements (loaded into the embedded server unless --no-profile): per
 * statement, how often it ran and how long PostgreSQL spent executing it. `calls` ÷
 * jobs is round trips per job; BEGIN and COMMIT are statements too.
 */

/**
 * The harness's own statements in the window (progress polls, wait sampling, EXPLAIN),
 * left out. pg_stat_statements drops comments, so they are told apart by what they read.
 */
const HARNESS_QUERIES = '(pg_stat_activity|pg_stat_statements|^explain|open_events|pg_database|^checkpoint)';

export interface StatementStat {
  query: string;
  calls: number;
  totalMs: number;
  meanMs: number;
  /** time planning it (pg_stat_statements.track_planning), outside totalMs */
  planMs: number;
  rows: number;
  walBytes: number;
}

export interface StatementProfile {
  statements: StatementStat[];
  totalCalls: number;
  totalMs: number;
  planMs: number;
  /** COMMITs: explicit transactions (a statement outside one is not counted) */
  commits: number;
}

export async function enableStatements(pool: pg.Pool): Promise<boolean> {
  try {
    await pool.query('create extension if not exists pg_stat_statements');
    return true;
  } catch {
    return false;
  }
}

/** Forget this database's statements so far (setup), keeping other databases' counts. */
export async function resetStatements(pool: pg.Pool): Promise<void> {
  await pool.query(`/* bench */ select pg_stat_statements_reset(0, (select oid from pg_database where datname = current_database()), 0)`);
}

export async function readStatements(pool: pg.Pool): Promise<StatementProfile> {
  const result = await pool.query<{ query: string; calls: bigint; total: number; mean: number; plan: number; rows: bigint; wal: string }>(
    `/* bench */ select query, calls, total_exec_time as total, mean_exec_time as mean, total_plan_time as plan, rows, wal_bytes::text as wal
     from pg_stat_statements
     where dbid = (select oid from pg_database where datname = current_database())
       and query !~* $1
     order by total_exec_time desc`,
    [HARNESS_QUERIES],
  );
  const statements = result.rows.map((r) => ({
    query: r.query.replace(/\s+/g, ' ').trim(),
    calls: Number(r.calls),
    totalMs: r.total,
    meanMs: r.mean,
    planMs: r.plan,
    rows: Number(r.rows),
    walBytes: Number(r.wal),
  }));
  return {
    statements,
    totalCalls: statements.reduce((n, s) => n + s.calls, 0),
    totalMs: statements.reduce((n, s) => n + s.totalMs, 0),
    planMs: statements.reduce((n, s) => n + s.planMs, 0),
    commits: statements.filter((s) => /^commit$/i.test(s.query)).reduce((n, s) => n + s.calls, 0),
  };
}
