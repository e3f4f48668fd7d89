import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MigrationsCorrupted, migrate } from '../../src/db/migrate.js';
import { bookkeeping, emptyDatabase, migrateWithOldRunner, migrationsFolder, tablesOf } from '../support/migration-folders.js';

/**
 * The runner refuses to start on a folder or a database it cannot trust (issue 24.6),
 * on real PostgreSQL, each case on a fresh empty database with a folder of its own.
 * A refusal names the file(s) and the fix, and applies nothing.
 */

const A = { '0001_a.sql': 'create table a (id int);\n' };
const B = { '0002_b.sql': 'create table b (id int);\n' };
const C = { '0003_c.sql': 'create table c (id int);\n' };
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** migrate() must reject with MigrationsCorrupted whose message matches every pattern. */
async function expectRefusal(run: Promise<unknown>, ...patterns: RegExp[]): Promise<MigrationsCorrupted> {
  const error = await run.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, 'migrate started on a folder it should refuse').toBeInstanceOf(MigrationsCorrupted);
  const refusal = error as MigrationsCorrupted;
  expect(refusal.message).toMatch(/^corrupted migrations in /);
  for (const pattern of patterns) expect(refusal.message).toMatch(pattern);
  return refusal;
}

describe('migrate checks the folder and the database before applying anything', () => {
  it('applies a sound folder in order, records name and sha256 of each file, then applies only what is new', async () => {
    const db = await emptyDatabase();
    const folder = await migrationsFolder({ ...A, ...B });
    expect(await migrate(db.url, () => {}, { dir: folder.dir })).toEqual(['0001_a', '0002_b']);
    expect(await bookkeeping(db.pool)).toEqual([
      { version: 1, name: '0001_a', checksum: sha256(A['0001_a.sql']) },
      { version: 2, name: '0002_b', checksum: sha256(B['0002_b.sql']) },
    ]);
    expect(await migrate(db.url, () => {}, { dir: folder.dir })).toEqual([]);
    await folder.write(C);
    expect(await migrate(db.pool, () => {}, { dir: folder.dir })).toEqual(['0003_c']);
    expect(await tablesOf(db.pool)).toEqual(['a', 'b', 'c']);
  });

  it('refuses two files with the same number, naming both', async () => {
    const db = await emptyDatabase();
    const folder = await migrationsFolder({ ...A, ...B, '0002_also_b.sql': 'create table b2 (id int);\n' });
    const refusal = await expectRefusal(
      migrate(db.url, () => {}, { dir: folder.dir }),
      /0002_also_b\.sql and 0002_b\.sql share the number 0002/,
      /renumber the other to the next free number \(0003\)/,
    );
    expect(refusal.problems).toHaveLength(1);
    expect(await tablesOf(db.pool)).toEqual([]);
    // What the old runner did with the same folder: one of the two silently never ran.
    const other = await emptyDatabase();
    expect(await migrateWithOldRunner(other.url, folder.dir)).toEqual(['0001_a', '0002_also_b']);
    expect(await tablesOf(other.pool)).toEqual(['a', 'b2']);
  });

  it('refuses a gap in the numbering, naming the missing number and the file after it', async () => {
    const db = await emptyDatabase();
    const folder = await migrationsFolder({ ...A, ...C });
    await expectRefusal(
      migrate(db.url, () => {}, { dir: folder.dir }),
      /no migration is numbered 0002 \(the next is 0003_c\.sql\)/,
      /restore the missing file/,
    );
    expect(await tablesOf(db.pool)).toEqual([]);
  });

  it('refuses a .sql file not named like a migration instead of skipping it', async () => {
    const db = await emptyDatabase();
    const folder = await migrationsFolder({ ...A, '0002-b.sql': 'create table b (id int);\n' });
    await expectRefusal(
      migrate(db.url, () => {}, { dir: folder.dir }),
      /0002-b\.sql is not named like a migration/,
    );
    expect(await tablesOf(db.pool)).toEqual([]);
  });

  it('refuses when an applied migration is missing from the folder (an older build, or a deleted file)', async () => {
    const db = await emptyDatabase();
    const folder = await migrationsFolder({ ...A, ...B, ...C });
    await migrate(db.url, () => {}, { dir: folder.dir });
    await folder.remove('0003_c.sql');
    await expectRefusal(
      migrate(db.url, () => {}, { dir: folder.dir }),
      /0003_c was applied to this database, but the folder has no migration numbered 0003/,
      /run a build that has it/,
    );
  });

  it('refuses one in the middle missing as applied-and-missing, not also as a gap', async () => {
    const db = await emptyDatabase();
    const folder = await migrationsFolder({ ...A, ...B, ...C });
    await migrate(db.url, () => {}, { dir: folder.dir });
    await folder.remove('0002_b.sql');
    const refusal = await expectRefusal(
      migrate(db.url, () => {}, { dir: folder.dir }),
      /0002_b was applied to this database/,
    );
    expect(refusal.problems).toHaveLength(1);
  });

  it('refuses a pending file numbered below the newest applied one (out of order), and applies nothing after it', async () => {
    const db = await emptyDatabase();
    // The old runner never noticed the gap: 0001 and 0003 applied, then 0002 arrives (a late merge).
    const folder = await migrationsFolder({ ...A, ...C });
    expect(await migrateWithOldRunner(db.url, folder.dir)).toEqual(['0001_a', '0003_c']);
    await folder.write({ ...B, '0004_d.sql': 'create table d (id int);\n' });
    await expectRefusal(
      migrate(db.url, () => {}, { dir: folder.dir }),
      /0002_b\.sql is not applied, but the newer 0003_c is/,
      /renumber it to the next free number \(0005\)/,
    );
    expect(await tablesOf(db.pool)).toEqual(['a', 'c']);
  });

  it('refuses an applied migration whose file was renamed', async () => {
    const db = await emptyDatabase();
    const folder = await migrationsFolder({ ...A, ...B });
    await migrate(db.url, () => {}, { dir: folder.dir });
    await folder.remove('0002_b.sql');
    await folder.write({ '0002_bee.sql': B['0002_b.sql'] });
    await expectRefusal(
      migrate(db.url, () => {}, { dir: folder.dir }),
      /0002 was applied as 0002_b, but the folder's 0002 is 0002_bee\.sql/,
      /rename the file back to 0002_b\.sql/,
    );
  });

  it('refuses an applied migration whose file changed (sha256 of its bytes), and applies nothing pending', async () => {
    const db = await emptyDatabase();
    const folder = await migrationsFolder({ ...A, ...B });
    await migrate(db.url, () => {}, { dir: folder.dir });
    // Even a change no SQL parser sees: the bytes are what ran.
    await folder.write({ '0001_a.sql': 'create table a (id int); -- edited\n', ...C });
    await expectRefusal(
      migrate(db.url, () => {}, { dir: folder.dir }),
      new RegExp(
        `0001_a\\.sql changed after it was applied \\(sha256 ${sha256(A['0001_a.sql']).slice(0, 12)}… then, ${sha256('create table a (id int); -- edited\n').slice(0, 12)}… now\\)`,
      ),
      /put the change in a new migration \(0004\)/,
    );
    expect(await tablesOf(db.pool)).toEqual(['a', 'b']);
  });

  it("upgrades a database migrated by the old runner: rows without checksum take the files' on the first run, then edits are refused", async () => {
    const db = await emptyDatabase();
    const folder = await migrationsFolder({ ...A, ...B });
    await migrateWithOldRunner(db.url, folder.dir);
    const before = await db.pool.query(
      "select 1 from information_schema.columns where table_name = 'schema_migrations' and column_name = 'checksum'",
    );
    expect(before.rowCount).toBe(0);
    await folder.write(C);
    expect(await migrate(db.url, () => {}, { dir: folder.dir })).toEqual(['0003_c']);
    expect(await bookkeeping(db.pool)).toEqual([
      { version: 1, name: '0001_a', checksum: sha256(A['0001_a.sql']) },
      { version: 2, name: '0002_b', checksum: sha256(B['0002_b.sql']) },
      { version: 3, name: '0003_c', checksum: sha256(C['0003_c.sql']) },
    ]);
    expect(await migrate(db.url, () => {}, { dir: folder.dir })).toEqual([]);
    await folder.write({ '0002_b.sql': 'create table b (id bigint);\n' });
    await expectRefusal(
      migrate(db.url, () => {}, { dir: folder.dir }),
      /0002_b\.sql changed after it was applied/,
    );
  });

  it('upgrade: an old row whose name differs from the file keeps no checksum and is refused', async () => {
    const db = await emptyDatabase();
    const folder = await migrationsFolder({ ...A, ...B });
    await migrateWithOldRunner(db.url, folder.dir);
    await folder.remove('0002_b.sql');
    await folder.write({ '0002_bee.sql': B['0002_b.sql'] });
    await expectRefusal(
      migrate(db.url, () => {}, { dir: folder.dir }),
      /0002 was applied as 0002_b/,
    );
    // Refused in the transaction that would have filled the checksums: nothing of it stays.
    expect((await bookkeeping(db.pool)).map((r) => r.checksum)).toEqual([null, null]);
  });
});
