import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import pg from 'pg';
import { urlOf, type Pool } from './pool.js';
import { newClient } from './host-selection.js';
import { TransactionRollbackError, mapDatabaseError } from './errors.js';
import { backoff, sleep } from '../backoff.js';
import { MAX_TRANSACTION_ATTEMPTS, TRANSACTION_RETRY_BACKOFF } from './transaction.js';
import {
  MIGRATION_FILE_NAME,
  MigrationsCorrupted,
  appliedProblems,
  folderProblems,
  type AppliedMigration,
  type MigrationFile,
} from './migration-check.js';

export { MigrationsCorrupted } from './migration-check.js';

/** `migrations/` at the package root, found the same way from src/ (tests) and dist/. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

/** Any constant works; it only has to be the same in every Tally process. */
export const MIGRATION_LOCK_ID = 7_245_118_031n;

export interface Migration extends MigrationFile {
  sql: string;
}

export interface MigrationsFolder {
  migrations: Migration[];
  /** `.sql` files not named like a migration: refused, never skipped silently */
  strays: string[];
}

export async function readMigrationsFolder(dir = MIGRATIONS_DIR): Promise<MigrationsFolder> {
  const sqlFiles = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  const named = sqlFiles.filter((f) => MIGRATION_FILE_NAME.test(f));
  const migrations = await Promise.all(
    named.map(async (file) => {
      const bytes = await readFile(join(dir, file));
      return {
        version: Number(file.slice(0, 4)),
        name: file.replace(/\.sql$/, ''),
        checksum: createHash('sha256').update(bytes).digest('hex'),
        sql: bytes.toString('utf8'),
      };
    }),
  );
  return { migrations, strays: sqlFiles.filter((f) => !MIGRATION_FILE_NAME.test(f)) };
}

export async function loadMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  return (await readMigrationsFolder(dir)).migrations;
}

export interface MigrateOptions {
  /** the migrations folder; tests point it at folders of their own */
  dir?: string;
}

/**
 * Forward-only. Each migration runs in its own transaction under a transaction-level
 * advisory lock, with its bookkeeping row (number, name, sha256 of the file) inserted
 * first: two processes starting at once apply each migration exactly once, the second
 * one waits and then skips it.
 *
 * Before applying anything, under that lock, the folder and the database are checked
 * against each other (migration-check.ts): a duplicated or missing number, a pending file
 * below the newest applied one, an applied migration missing, renamed or edited — any of
 * them stops the start with MigrationsCorrupted, and nothing is applied.
 *
 * They run on a connection of their own, not a pool client: serve and worker give
 * their pool a statement timeout sized for settlements (lease / 3) and a client-side
 * query timeout a little longer. Waiting for another process's migration, or a long
 * migration (an index build), must not be cut short by either and rolled back. The
 * pool (or a URL) only says where the database is.
 */
export async function migrate(
  target: Pool | string,
  log: (message: string) => void = () => {},
  options: MigrateOptions = {},
): Promise<string[]> {
  const dir = options.dir ?? MIGRATIONS_DIR;
  const folder = await readMigrationsFolder(dir);
  const client = migrationClient(target);
  // A broken connection rejects the query in flight; the event itself must not crash us.
  client.on('error', () => {});
  await client.connect();
  try {
    // Session-wide on this dedicated connection: no server-side limit either, whatever
    // the role or database defaults say.
    await client.query('set statement_timeout = 0; set lock_timeout = 0; set idle_in_transaction_session_timeout = 0');
    await retried(client, () => bootstrap(client));
    const applied: string[] = [];
    for (;;) {
      const next = await retried(client, () => applyNext(client, dir, folder));
      if (!next) return applied;
      applied.push(next.name);
      log(`applied migration ${next.name}`);
    }
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The runner owns its bookkeeping table, so its DDL lives here rather than in a
 * migration. `checksum` came later: a database migrated before then gains the column
 * here, and its rows are filled in by applyNext.
 */
async function bootstrap(client: pg.Client): Promise<void> {
  await client.query('select pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK_ID]);
  await client.query(`create table if not exists schema_migrations (
    version integer primary key,
    name text not null,
    checksum text,
    applied_at timestamptz not null default now())`);
  // Only when missing: ALTER TABLE locks the table against the readers (healthz) even
  // when it changes nothing.
  const column = await client.query(
    "select 1 from pg_attribute where attrelid = 'schema_migrations'::regclass and attname = 'checksum' and not attisdropped",
  );
  if (column.rowCount === 0) await client.query('alter table schema_migrations add column checksum text');
}

/**
 * Applies the first pending migration, in one transaction; null when none is pending.
 * The check runs in every transaction, under the lock: another process may have applied
 * some meanwhile, from another build.
 */
async function applyNext(client: pg.Client, dir: string, folder: MigrationsFolder): Promise<Migration | null> {
  await client.query('select pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK_ID]);
  // Upgrade of a database migrated before checksums were recorded (checksum null): its
  // rows take the checksums of the files as they are now, on the first run of this
  // runner, as graphile-migrate trusts the first run. Only rows whose name matches the
  // file: a renamed one is refused below. An edit made before the upgrade cannot be seen.
  await client.query(
    `update schema_migrations m set checksum = f.checksum
     from unnest($1::int[], $2::text[], $3::text[]) as f(version, name, checksum)
     where m.version = f.version and m.name = f.name and m.checksum is null`,
    [folder.migrations.map((m) => m.version), folder.migrations.map((m) => m.name), folder.migrations.map((m) => m.checksum)],
  );
  const rows = await client.query<AppliedMigration>('select version, name, checksum from schema_migrations order by version');
  const applied = rows.rows;
  const problems = [
    ...folderProblems(folder.migrations, folder.strays, new Set(applied.map((row) => row.version))),
    ...appliedProblems(folder.migrations, applied),
  ];
  if (problems.length > 0) throw new MigrationsCorrupted(dir, problems);
  const done = new Set(applied.map((row) => row.version));
  const next = folder.migrations.find((m) => !done.has(m.version));
  if (!next) return null;
  await client.query('insert into schema_migrations (version, name, checksum) values ($1, $2, $3)', [
    next.version,
    next.name,
    next.checksum,
  ]);
  await client.query(next.sql);
  return next;
}

/** One transaction around `work`; a deadlock or serialization failure with live traffic is retried. */
async function retried<T>(client: pg.Client, work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.query('begin');
      const result = await work();
      await client.query('commit');
      return result;
    } catch (error) {
      await client.query('rollback').catch(() => {});
      if (error instanceof MigrationsCorrupted) throw error;
      const mapped = mapDatabaseError(error);
      if (!(mapped instanceof TransactionRollbackError) || attempt >= MAX_TRANSACTION_ATTEMPTS) throw mapped;
      await sleep(backoff(attempt, TRANSACTION_RETRY_BACKOFF));
    }
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

/** True when every migration this build knows is applied (healthz). */
export async function migrationsCurrent(pool: Pool): Promise<boolean> {
  const expected = (await loadMigrations()).map((m) => m.version);
  const result = await pool
    .query<{ version: number }>("select version from schema_migrations where to_regclass('schema_migrations') is not null")
    .catch(() => ({ rows: [] as { version: number }[] }));
  const have = new Set(result.rows.map((r) => r.version));
  return expected.every((v) => have.has(v));
}
