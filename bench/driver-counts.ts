import type pg from 'pg';

/**
 * Round trips and commits counted at the driver by each Tally process
 * (tally_db_statements_total / tally_db_commits_total on its /metrics: serve's, and each
 * worker's --metrics-port), and the WAL PostgreSQL wrote: figures that need no extension,
 * so they are there on any server. The harness's own statements are not in them.
 */
export interface DriverCounts {
  statements: number;
  commits: number;
  /** pg_current_wal_lsn(), as text, for pg_wal_lsn_diff */
  walLsn: string;
}

async function scrape(metricsUrl: string): Promise<{ statements: number; commits: number }> {
  const text = await (await fetch(metricsUrl)).text();
  const value = (name: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    if (!line) throw new Error(`${metricsUrl} has no ${name}`);
    return Number(line.slice(name.length + 1));
  };
  return { statements: value('tally_db_statements_total'), commits: value('tally_db_commits_total') };
}

export async function readDriverCounts(pool: pg.Pool, metricsUrls: string[]): Promise<DriverCounts> {
  const counts = await Promise.all(metricsUrls.map(scrape));
  const { rows } = await pool.query<{ lsn: string }>('/* bench */ select pg_current_wal_lsn()::text as lsn');
  return {
    statements: counts.reduce((n, c) => n + c.statements, 0),
    commits: counts.reduce((n, c) => n + c.commits, 0),
    walLsn: rows[0]!.lsn,
  };
}

/** What happened between two readings: statements, commits and WAL bytes. */
export async function countsBetween(pool: pg.Pool, before: DriverCounts, after: DriverCounts) {
  const { rows } = await pool.query<{ bytes: string }>('/* bench */ select pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::text as bytes', [
    after.walLsn,
    before.walLsn,
  ]);
  return { statements: after.statements - before.statements, commits: after.commits - before.commits, walBytes: Number(rows[0]!.bytes) };
}
