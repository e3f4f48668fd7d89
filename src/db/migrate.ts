import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import pg from 'pg';
import { urlOf, type Pool } from './pool.js';
import { newClient } from './host-selection.js';
import { TransactionRollbackError, mapDatabaseError } from './errors.js';
import { backoff, sleep } from '../backoff.js';
import { MAX_TRANSACTION_ATTEMPTS, TRANSACTION_RETRY_BACKOFF } from './transaction.js';

/** `migrations/` at the package root, found the same way from src/ (tests) and dist/. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

/** Any constant works; it only has to be the same in every Tally process. */
export const MIGRATION_LOCK_ID = 7_245_118_031n;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export async function loadMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => ({
      version: Number(file.slice(0, 4)),
      name: file.replace(/\.sql$/, ''),
      sql: await readFile(join(dir, file), 'utf8'),
    })),
  );
}

/**
 * Forward-only. Each migration runs in its own transaction under a transaction-level
 * advisory lock, with its bookkeeping row inserted first: two processes starting at
 * once apply each migration exactly once, the second one waits and then skips it.
 *
 * They run on a connection of their own, not a pool client: serve and worker give
 * their pool a statement timeout sized for settlements (lease / 3) and a client-side
 * query timeout a little longer. Waiting for another process's migration, or a long
 * migration (an index build), must not be cut short by either and rolled back. The
 * pool (or a URL) only says where the database is.
 */
export async function migrate(target: Pool | string, log: (message: string) => void = () => {}): Promise<string[]> {
  const migrations = await loadMigrations();
  const client = migrationClient(target);
  // A broken connection rejects the query in flight; the event itself must not crash us.
  client.on('error', () => {});
  await client.connect();
  try {
    // Session-wide on this dedicated connection: no server-side limit either, whatever
    // the role or database defaults say.
    await client.query('set statement_timeout = 0; set lock_timeout = 0; set idle_in_transaction_session_timeout = 0');
    const applied: string[] = [];
    for (const migration of migrations) {
      if (await applyOnce(client, migration)) {
        applied.push(migration.name);
        log(`applied migration ${migration.name}`);
      }
    }
    return applied;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * A connection to the database, without the pool's timeouts (no query_timeout, no
 * statement_timeout). To the pool's DATABASE_URL when known, so that a multi-host URL
 * migrates its primary (host-selection.ts).
 */
function migrationClient(target: Pool | string): pg.Client {
  if (typeof target === 'string') return newClient(target, { keepAlive: true, application_name: 'tally-migrate' });
  const { connectionString, ...config } = migrationConnection(target);
  const url = urlOf(target);
  return url ? newClient(url, config) : new pg.Client({ connectionString, ...config });
}

function migrationConnection(target: Pool): pg.ClientConfig {
  const o = target.options;
  return {
    connectionString: o.connectionString,
    host: o.host,
    port: o.port,
    user: o.user,
    password: o.password,
    database: o.database,
    ssl: o.ssl,
    // A server that vanishes mid-migration is noticed by TCP keepalive, not by a timeout.
    keepAlive: true,
    connectionTimeoutMillis: o.connectionTimeoutMillis,
    // The process's own name (tally-serve, tally-worker): an operator looking at
    // pg_stat_activity sees which process is migrating, or waiting to.
    application_name: o.application_name ?? 'tally-migrate',
  };
}

/** One migration in one transaction; a deadlock with live traffic is retried. False when already applied. */
async function applyOnce(client: pg.Client, migration: Migration): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.query('begin');
      await client.query('select pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK_ID]);
      await client.query(`create table if not exists schema_migrations (
        version integer primary key,
        name text not null,
        applied_at timestamptz not null default now())`);
      const inserted = await client.query(
        'insert into schema_migrations (version, name) values ($1, $2) on conflict (version) do nothing',
        [migration.version, migration.name],
      );
      if (inserted.rowCount === 0) {
        await client.query('rollback');
        return false;
      }
      await client.query(migration.sql);
      await client.query('commit');
      return true;
    } catch (error) {
      await client.query('rollback').catch(() => {});
      const mapped = mapDatabaseError(error);
      if (!(mapped instanceof TransactionRollbackError) || attempt >= MAX_TRANSACTION_ATTEMPTS) throw mapped;
      await sleep(backoff(attempt, TRANSACTION_RETRY_BACKOFF));
    }
  }
}

/** True when every migration this build knows is applied (healthz). */
export async function migrationsCurrent(pool: Pool): Promise<boolean> {
  const expected = (await loadMigrations()).map((m) => m.version);
  const result = await pool.query<{ version: number }>(
    "select version from schema_migrations where to_regclass('schema_migrations') is not null",
  ).catch(() => ({ rows: [] as { version: number }[] }));
  const have = new Set(result.rows.map((r) => r.version));
  return expected.every((v) => have.has(v));
}
