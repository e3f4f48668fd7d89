import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject, onTestFinished } from 'vitest';
import { createPool, type Pool } from '../../src/db/pool.js';
import { loadMigrations } from '../../src/db/migrate.js';
import { withDatabase } from './global-setup.js';

/**
 * For the migration runner's own tests: an empty database (not the migrated template)
 * and a migrations folder of the test's own, both removed when the test ends.
 */

export interface EmptyDatabase {
  url: string;
  pool: Pool;
}

export async function emptyDatabase(): Promise<EmptyDatabase> {
  const serverUrl = inject('databaseUrl');
  const admin = createPool(withDatabase(serverUrl, 'postgres'), { max: 1 });
  const name = `tally_migrate_${randomBytes(5).toString('hex')}`;
  await admin.query(`create database ${name}`);
  const url = withDatabase(serverUrl, name);
  const pool = createPool(url, { max: 2 });
  onTestFinished(async () => {
    await pool.end();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  });
  return { url, pool };
}

/** A temporary migrations folder; `write` adds or replaces files (name → SQL text). */
export async function migrationsFolder(
  files: Record<string, string>,
): Promise<{ dir: string; write: (files: Record<string, string>) => Promise<void>; remove: (name: string) => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-migrations-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const write = async (more: Record<string, string>): Promise<void> => {
    for (const [name, sql] of Object.entries(more)) await writeFile(join(dir, name), sql);
  };
  await write(files);
  return { dir, write, remove: (name) => rm(join(dir, name)) };
}

/**
 * The runner as it was before it checked anything (kept here verbatim in behaviour): a
 * table without checksums, the files in name order, `on conflict (version) do nothing`
 * — so a second file with a taken number was silently skipped. Databases migrated by it
 * are what the current runner must upgrade.
 */
export async function migrateWithOldRunner(url: string, dir: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const applied: string[] = [];
  try {
    for (const migration of await loadMigrations(dir)) {
      await client.query('begin');
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
        continue;
      }
      await client.query(migration.sql);
      await client.query('commit');
      applied.push(migration.name);
    }
    return applied;
  } finally {
    await client.end();
  }
}

export async function tablesOf(pool: Pool): Promise<string[]> {
  const result = await pool.query<{ name: string }>(
    "select tablename as name from pg_tables where schemaname = 'public' and tablename <> 'schema_migrations' order by 1",
  );
  return result.rows.map((r) => r.name);
}

export async function bookkeeping(pool: Pool): Promise<{ version: number; name: string; checksum: string | null }[]> {
  const result = await pool.query('select version, name, checksum from schema_migrations order by version');
  return result.rows;
}
