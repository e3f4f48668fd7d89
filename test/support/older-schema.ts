import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, inject } from 'vitest';
import { loadMigrations, MIGRATIONS_DIR } from '../../src/db/migrate.js';
import { createPool, type Pool } from '../../src/db/pool.js';
import { withTransaction } from '../../src/db/transaction.js';
import { withDatabase } from './global-setup.js';

/**
 * For the tests of a migration on rows written before it: an empty database of the test
 * file's own (dropped after the file), and the migrations below a version applied the way
 * migrate() applies them, each in its transaction and recorded in schema_migrations —
 * so that the test can write the rows the old code wrote, then migrate() the rest.
 */
export async function fileDatabase(prefix: string): Promise<Pool> {
  const admin = createPool(withDatabase(inject('databaseUrl'), 'postgres'), { max: 1 });
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  await admin.query(`create database ${name}`);
  const pool = createPool(withDatabase(inject('databaseUrl'), name), { max: 4 });
  urls.set(pool, withDatabase(inject('databaseUrl'), name));
  afterAll(async () => {
    await pool.end();
    await admin.query(`drop database ${name} with (force)`);
    await admin.end();
  });
  return pool;
}

const urls = new WeakMap<Pool, string>();

/**
 * New connections to a fileDatabase, for the code that runs after a migration: a connection
 * that prepared `select j.*` before a migration added columns to jobs refuses to run it
 * again ("cached plan must not change result type"), as a server started before a migration
 * would; Tally's servers migrate as they start, so the new code always has new connections.
 */
export function reconnected(pool: Pool): Pool {
  const fresh = createPool(urls.get(pool)!, { max: 4 });
  afterAll(() => fresh.end());
  return fresh;
}

/** The schema as it was before migration `version`. */
export async function migrateBefore(pool: Pool, version: number): Promise<void> {
  await pool.query(
    'create table schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now())',
  );
  for (const migration of (await loadMigrations()).filter((m) => m.version < version)) {
    await withTransaction(pool, async (tx) => {
      await tx.query('insert into schema_migrations (version, name) values ($1, $2)', [migration.version, migration.name]);
      await tx.query(migration.sql);
    });
  }
}

/**
 * A migrations folder holding the checkout's migrations up to `version` (removed after the
 * file): migrate(pool, log, { dir }) applies them with the real runner and stops there, so a
 * test can look at the rows right after one migration, before later ones change them; a
 * later migrate(pool) applies the rest (the files are the same, so are their checksums).
 */
export async function migrationsThrough(version: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-migrations-'));
  afterAll(() => rm(dir, { recursive: true, force: true }));
  for (const migration of (await loadMigrations()).filter((m) => m.version <= version)) {
    await copyFile(join(MIGRATIONS_DIR, `${migration.name}.sql`), join(dir, `${migration.name}.sql`));
  }
  return dir;
}
