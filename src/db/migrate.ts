import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { Pool } from './pool.js';
import { withTransaction } from './transaction.js';

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
 */
export async function migrate(pool: Pool, log: (message: string) => void = () => {}): Promise<string[]> {
  const applied: string[] = [];
  for (const migration of await loadMigrations()) {
    const ran = await withTransaction(pool, async (tx) => {
      // serve and worker size their pool's statement timeout for settlements (lease / 3):
      // waiting for another process's migration, or a long one (an index build), must
      // not be cut short by it. For this transaction only.
      await tx.query('set local statement_timeout = 0');
      await tx.query('select pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK_ID]);
      await tx.query(`create table if not exists schema_migrations (
        version integer primary key,
        name text not null,
        applied_at timestamptz not null default now())`);
      const inserted = await tx.query(
        'insert into schema_migrations (version, name) values ($1, $2) on conflict (version) do nothing',
        [migration.version, migration.name],
      );
      if (inserted.rowCount === 0) return false;
      await tx.query(migration.sql);
      return true;
    });
    if (ran) {
      applied.push(migration.name);
      log(`applied migration ${migration.name}`);
    }
  }
  return applied;
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
