import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { createPool } from '../../src/db/pool.js';
import { MIGRATION_LOCK_ID, migrate, migrationsCurrent } from '../../src/db/migrate.js';
import { withDatabase } from '../support/global-setup.js';
import { waitUntil } from '../support/server.js';

/**
 * Migrations run on a connection of their own, without the pool's client-side query
 * timeout: waiting for another process's migration (a real second connection holding
 * the migration lock) for longer than that timeout must not abort the start.
 */

const QUERY_TIMEOUT_MS = 300;
const HOLD_BEYOND_TIMEOUT_MS = 4 * QUERY_TIMEOUT_MS;

describe('migrate', () => {
  it('waits for another process holding the migration lock longer than the pool query timeout, then applies', async () => {
    const serverUrl = inject('databaseUrl');
    const admin = createPool(withDatabase(serverUrl, 'postgres'), { max: 1 });
    const name = `tally_lockwait_${randomBytes(5).toString('hex')}`;
    await admin.query(`create database ${name}`);
    const url = withDatabase(serverUrl, name);
    const pool = createPool(url, { max: 2, statementTimeout: 200, queryTimeout: QUERY_TIMEOUT_MS });
    const holder = new pg.Client({ connectionString: url, application_name: 'other-process-migrating' });
    await holder.connect();
    try {
      await holder.query('select pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_ID]);
      let settled = false;
      const run = migrate(pool).finally(() => (settled = true));
      run.catch(() => {}); // inspected below
      // The migrate is really queued behind the lock, not yet started or already failed.
      await waitUntil(async () => {
        const waiting = await holder.query(
          `select count(*)::int as n from pg_stat_activity
           where datname = $1 and wait_event_type = 'Lock' and wait_event = 'advisory'`,
          [name],
        );
        return waiting.rows[0].n === 1 || settled;
      });
      expect(settled, 'migrate gave up instead of waiting for the lock').toBe(false);
      // The point of the test is a duration: the lock is held well past the query timeout.
      await new Promise((r) => setTimeout(r, HOLD_BEYOND_TIMEOUT_MS));
      expect(settled, 'migrate gave up while the other process held the lock').toBe(false);
      await holder.query('select pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_ID]);
      const applied = await run;
      expect(applied.length).toBeGreaterThan(0);
      expect(await migrationsCurrent(pool)).toBe(true);
    } finally {
      await holder.end();
      await pool.end();
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });
});
