import pg from 'pg';
import { DATABASE } from './formation.js';

/**
 * The drill's own connections to one node of the formation, for setup and for the
 * checks: always to a named node (the one the monitor says is primary), never through
 * the multi-host URL, so a check reads the new primary and nothing else.
 */

export const TALLY_ROLE = 'tally';

/** int8 as bigint: counts and amounts are compared exactly, never as floats or strings. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8
      ? (value: string) => BigInt(value)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

export function nodePool(port: number, user: string = TALLY_ROLE): pg.Pool {
  const pool = new pg.Pool({
    host: '127.0.0.1',
    port,
    user,
    database: DATABASE,
    max: 2,
    // --ssl-self-signed: encrypted, not verified (as libpq's sslmode=require).
    ssl: { rejectUnauthorized: false },
    types,
    connectionTimeoutMillis: 5_000,
  });
  // A node that is killed mid-query must not take the drill down with it.
  pool.on('error', () => {});
  return pool;
}

/**
 * Tally's role and database on the primary: the role owns the database (so its
 * migrations may create what they need in it, PostgreSQL 15's public schema included).
 * pg_autoctl created the database itself (`--dbname tally`). Returns what Tally's
 * sessions will run with, to be checked: synchronous_commit and synchronous_standby_names.
 */
export async function prepareTallyDatabase(primaryPort: number): Promise<{ synchronousCommit: string; standbyNames: string }> {
  const admin = nodePool(primaryPort, 'postgres');
  try {
    await admin.query(`create role ${TALLY_ROLE} login`);
    await admin.query(`alter database ${DATABASE} owner to ${TALLY_ROLE}`);
  } finally {
    await admin.end();
  }
  const tally = nodePool(primaryPort);
  try {
    const commit = await tally.query<{ synchronous_commit: string }>('show synchronous_commit');
    const names = await tally.query<{ synchronous_standby_names: string }>('show synchronous_standby_names');
    return { synchronousCommit: commit.rows[0]!.synchronous_commit, standbyNames: names.rows[0]!.synchronous_standby_names };
  } finally {
    await tally.end();
  }
}
