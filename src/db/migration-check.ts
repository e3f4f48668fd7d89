/**
 * What the migration runner refuses, decided on values (no I/O): the files of the
 * migrations folder, and the rows of `schema_migrations` a database holds. Like kysely's
 * Migrator ("corrupted migrations") and graphile-migrate, a runner that trusts file
 * names applies the wrong thing quietly: a second file with a number already taken never
 * runs, a file edited after it ran is never re-run, and one inserted below the newest
 * applied runs after migrations written later than it. Each problem is one sentence
 * naming the file(s) and the fix; all of them are reported at once.
 */

/** `0001_core.sql`: four digits, an underscore, lowercase words. */
export const MIGRATION_FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export interface MigrationFile {
  version: number;
  /** the file name without `.sql`, as recorded in `schema_migrations.name` */
  name: string;
  /** sha256 of the file's bytes, hex */
  checksum: string;
}

export interface AppliedMigration {
  version: number;
  name: string;
  /** null only on rows written by the runner before checksums were recorded (see migrate.ts) */
  checksum: string | null;
}

export class MigrationsCorrupted extends Error {
  constructor(
    readonly dir: string,
    readonly problems: string[],
  ) {
    super(
      `corrupted migrations in ${dir}: Tally applies nothing more and will not start until this is fixed:\n` +
        problems.map((p) => `  - ${p}`).join('\n'),
    );
    this.name = 'MigrationsCorrupted';
  }
}

const pad = (version: number): string => String(version).padStart(4, '0');
const file = (m: { name: string }): string => `${m.name}.sql`;
const short = (checksum: string): string => checksum.slice(0, 12);
/** The number to suggest for a new or renumbered file: above every file and every applied row. */
const nextFree = (files: MigrationFile[], applied: Iterable<number>): string =>
  pad(Math.max(0, ...files.map((f) => f.version), ...applied) + 1);

/**
 * Problems of the folder alone: `.sql` files the runner would skip, numbers used twice,
 * numbers missing from 0001 up to the highest. `applied` only sharpens a missing number
 * that this database did apply into the more precise problem `appliedProblems` reports.
 */
export function folderProblems(files: MigrationFile[], strays: string[], applied: ReadonlySet<number> = new Set()): string[] {
  const problems: string[] = [];
  for (const stray of strays) {
    problems.push(
      `${stray} is not named like a migration (NNNN_lowercase_words.sql), so it would never run: ` +
        'rename it to the next free number, or move it out of the folder',
    );
  }
  const next = nextFree(files, applied);
  const byVersion = new Map<number, MigrationFile[]>();
  for (const f of files) byVersion.set(f.version, [...(byVersion.get(f.version) ?? []), f]);
  for (const [version, same] of [...byVersion].sort(([a], [b]) => a - b)) {
    if (version === 0) {
      problems.push(`${same.map(file).join(', ')}: numbers start at 0001; renumber it to ${next}`);
    } else if (same.length > 1) {
      problems.push(
        `${same.map(file).join(' and ')} share the number ${pad(version)}, and only one of them would ever run: ` +
          `keep the one already released under ${pad(version)} and renumber the other to the next free number (${next})`,
      );
    }
  }
  const highest = Math.max(0, ...byVersion.keys());
  for (let version = 1; version < highest; version++) {
    if (byVersion.has(version) || applied.has(version)) continue;
    const after = files.filter((f) => f.version > version).sort((a, b) => a.version - b.version)[0];
    problems.push(
      `no migration is numbered ${pad(version)} (the next is ${after ? file(after) : '?'}): the numbers run from 0001 ` +
        `without a gap; restore the missing file (git log --diff-filter=D -- migrations/), or, if no database ` +
        'ever applied the files after it, renumber them to close the gap',
    );
  }
  return problems;
}

/**
 * Problems between the folder and what this database applied: an applied migration the
 * folder lacks, renamed or edited since; a pending file below the newest applied one.
 * Rows without a checksum are compared by name only (the caller fills them in first).
 */
export function appliedProblems(files: MigrationFile[], applied: AppliedMigration[]): string[] {
  const problems: string[] = [];
  const byVersion = new Map(files.map((f) => [f.version, f]));
  const next = nextFree(
    files,
    applied.map((row) => row.version),
  );
  for (const row of applied) {
    const current = byVersion.get(row.version);
    if (!current) {
      problems.push(
        `${row.name} was applied to this database, but the folder has no migration numbered ${pad(row.version)}: ` +
          'this build is older than the database, or the file was deleted or renumbered; run a build that has it ' +
          '(migrations are forward-only: an applied one is never removed)',
      );
    } else if (current.name !== row.name) {
      problems.push(
        `${pad(row.version)} was applied as ${row.name}, but the folder's ${pad(row.version)} is ${file(current)}: ` +
          `an applied migration keeps its name and number; rename the file back to ${row.name}.sql, and give ` +
          `new work the next free number (${next})`,
      );
    } else if (row.checksum !== null && row.checksum !== current.checksum) {
      problems.push(
        `${file(current)} changed after it was applied (sha256 ${short(row.checksum)}… then, ${short(current.checksum)}… now): ` +
          `an applied migration is never edited; restore the applied text (git log -p -- migrations/${file(current)}) ` +
          `and put the change in a new migration (${next})`,
      );
    }
  }
  const done = new Set(applied.map((row) => row.version));
  const newest = applied.reduce<AppliedMigration | undefined>((a, b) => (a && a.version > b.version ? a : b), undefined);
  for (const f of files) {
    if (newest && !done.has(f.version) && f.version < newest.version) {
      problems.push(
        `${file(f)} is not applied, but the newer ${newest.name} is: it would run after migrations written later ` +
          `than it; renumber it to the next free number (${next})`,
      );
    }
  }
  return problems;
}
