import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { GENERIC_WRITERS, TABLE_OWNERS, type TableOwner } from '../../src/db/table-owners.js';

// Issue 24.8: one owner per table, enforced by a scan of the source. SQL lives in string and
// template literals, so the scan reads those (never comments) with TypeScript's own parser.

const root = fileURLToPath(new URL('../../', import.meta.url));
const owners: Record<string, TableOwner> = TABLE_OWNERS;

/** What a `${…}` of a template literal reads as: a table named at run time. */
const DYNAMIC = '${}';

/** One SQL text of a source file: a string or template literal, `${…}` as DYNAMIC. */
interface SqlText {
  file: string;
  line: number;
  text: string;
}

/** One statement (or CTE) writing a table. */
interface Write {
  file: string;
  line: number;
  verb: string;
  table: string;
  /** the columns an UPDATE sets; null for other verbs */
  columns: string[] | null;
}

function filesUnder(dir: string, extension: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(extension))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
}

function sqlTexts(file: string, source: string): SqlText[] {
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const texts: SqlText[] = [];
  const add = (node: ts.Node, text: string) =>
    texts.push({ file, line: sourceFile.getLineAndCharacterOfPosition(node.getStart()).line + 1, text });
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) add(node, node.text);
    else if (ts.isTemplateExpression(node))
      add(node, node.head.text + node.templateSpans.map((span) => DYNAMIC + span.literal.text).join(''));
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return texts;
}

const NAME = String.raw`(?:"?[a-z_][a-z0-9_]*"?\.)?"?([a-z_][a-z0-9_]*)"?`;
const TARGET = String.raw`(?:only\s+)?(?:${NAME}|(\$\{\}))`;
/** Each SQL form that writes a table, the table (or DYNAMIC) in group 1 or 2. */
const WRITE_FORMS: readonly { verb: string; pattern: RegExp }[] = [
  { verb: 'insert', pattern: new RegExp(String.raw`\binsert\s+into\s+${TARGET}`, 'gi') },
  { verb: 'update', pattern: new RegExp(String.raw`\bupdate\s+${TARGET}`, 'gi') },
  { verb: 'delete', pattern: new RegExp(String.raw`\bdelete\s+from\s+${TARGET}`, 'gi') },
  { verb: 'merge', pattern: new RegExp(String.raw`\bmerge\s+into\s+${TARGET}`, 'gi') },
  { verb: 'truncate', pattern: new RegExp(String.raw`\btruncate\s+(?:table\s+)?${TARGET}`, 'gi') },
  { verb: 'copy', pattern: new RegExp(String.raw`\bcopy\s+${TARGET}\s*(?:\([^)]*\)\s*)?from\b`, 'gi') },
];

/**
 * Every write in a SQL text to a known table or to a DYNAMIC one. Words that are no table
 * (`on conflict … do update set`, prose such as "update the …") are not writes.
 */
function writesIn(sql: SqlText, tables: ReadonlySet<string>): Write[] {
  const writes: Write[] = [];
  for (const { verb, pattern } of WRITE_FORMS) {
    for (const match of sql.text.matchAll(pattern)) {
      const table = match[2] ? DYNAMIC : match[1]!.toLowerCase();
      if (table !== DYNAMIC && !tables.has(table)) continue;
      const columns = verb === 'update' ? setColumns(sql.text.slice(match.index + match[0].length)) : null;
      writes.push({ file: sql.file, line: sql.line, verb, table, columns });
    }
  }
  return writes;
}

/** The columns of an UPDATE's SET list: `[alias] set a = …, b = …` up to its FROM, WHERE, RETURNING or closing parenthesis. */
function setColumns(afterTable: string): string[] {
  const set = /^\s*(?:(?:as\s+)?[a-z_][a-z0-9_]*\s+)?set\s/i.exec(afterTable);
  if (!set) return [];
  const columns: string[] = [];
  let depth = 0;
  let start = set[0].length;
  for (let i = start; i <= afterTable.length; i++) {
    const rest = afterTable.slice(i);
    const atEnd = i === afterTable.length || (depth === 0 && (/^\)/.test(rest) || /^\s(from|where|returning)\b/i.test(rest)));
    if (atEnd || (depth === 0 && rest[0] === ',')) {
      const column = /^\s*(?:[a-z_][a-z0-9_]*\.)?"?([a-z_][a-z0-9_]*)"?\s*=/i.exec(afterTable.slice(start, i));
      if (column) columns.push(column[1]!.toLowerCase());
      if (atEnd) break;
      start = i + 1;
    } else if (rest[0] === '(') depth++;
    else if (rest[0] === ')') depth--;
  }
  return columns;
}

function ownsPath(owner: string, file: string): boolean {
  return owner.endsWith('/') ? file.startsWith(owner) : file === owner;
}

/** Why a write breaks the map, or null when it keeps it. */
function violation(write: Write): string | null {
  const where = `${write.file}:${write.line}`;
  if (write.table === DYNAMIC) {
    if (Object.keys(GENERIC_WRITERS).some((writer) => ownsPath(writer, write.file))) return null;
    return `${where}: ${write.verb} of a table named at run time, outside GENERIC_WRITERS (src/db/table-owners.ts): write each table by name in its owner`;
  }
  const entry = owners[write.table];
  if (!entry) return `${where}: ${write.verb} ${write.table}, a table with no entry in TABLE_OWNERS (src/db/table-owners.ts)`;
  if (ownsPath(entry.owner, write.file)) return null;
  const shared = entry.shared;
  if (shared && shared.file === write.file) {
    const others = write.verb === 'update' ? write.columns!.filter((column) => !shared.columns.includes(column)) : null;
    if (others && others.length === 0 && write.columns!.length > 0) return null;
    return `${where}: ${write.verb} ${write.table}${others?.length ? ` (${others.join(', ')})` : ''}: this file may only update ${shared.columns.join(', ')}; the table's owner is ${entry.owner}`;
  }
  return `${where}: ${write.verb} ${write.table} outside its owner ${entry.owner} (src/db/table-owners.ts): call a named function of ${entry.owner} instead`;
}

/**
 * The tables the migrations leave, in their order: created, renamed and dropped. Tables a
 * module creates itself (the runner's schema_migrations) come from the source scan.
 */
function migratedTables(): Set<string> {
  const tables = new Set<string>();
  for (const file of filesUnder('migrations', '.sql')) {
    const sql = readFileSync(join(root, file), 'utf8').replace(/--[^\n]*/g, '');
    const statement =
      /\bcreate\s+(?:unlogged\s+)?table\s+(?:if\s+not\s+exists\s+)?(?:public\.)?([a-z_][a-z0-9_]*)|\balter\s+table\s+(?:if\s+exists\s+)?(?:only\s+)?(?:public\.)?([a-z_][a-z0-9_]*)\s+rename\s+to\s+([a-z_][a-z0-9_]*)|\bdrop\s+table\s+(?:if\s+exists\s+)?([a-z_][a-z0-9_,\s]*)/gi;
    for (const [, created, renamedFrom, renamedTo, dropped] of sql.matchAll(statement)) {
      if (created) tables.add(created.toLowerCase());
      if (renamedFrom && renamedTo) {
        tables.delete(renamedFrom.toLowerCase());
        tables.add(renamedTo.toLowerCase());
      }
      for (const name of dropped?.split(',') ?? []) tables.delete(name.trim().split(/\s/)[0]!.toLowerCase());
    }
  }
  return tables;
}

const sources = filesUnder('src', '.ts').flatMap((file) => sqlTexts(file, readFileSync(join(root, file), 'utf8')));
const createdInSource = new Set(
  sources.flatMap((sql) =>
    [...sql.text.matchAll(/\bcreate\s+table\s+(?:if\s+not\s+exists\s+)?([a-z_][a-z0-9_]*)/gi)].map((m) => m[1]!.toLowerCase()),
  ),
);
const schemaTables = new Set([...migratedTables(), ...createdInSource]);
const knownTables = new Set([...schemaTables, ...Object.keys(owners)]);

describe('one owner per table (src/db/table-owners.ts)', () => {
  it('has every write to a table in its owner, and nothing else writes a table named at run time', () => {
    const writes = sources.flatMap((sql) => writesIn(sql, knownTables));
    expect(writes.length).toBeGreaterThan(50);
    expect(writes.map(violation).filter((v) => v !== null)).toEqual([]);
  });

  it('names an owner for every table the migrations create, and only real tables', () => {
    expect(schemaTables.size).toBeGreaterThan(20);
    expect(
      [...schemaTables].filter((table) => !owners[table]).map((table) => `${table}: created by a migration, no owner in TABLE_OWNERS`),
    ).toEqual([]);
    expect(
      Object.keys(owners)
        .filter((table) => !schemaTables.has(table))
        .map((table) => `${table}: in TABLE_OWNERS, created by no migration`),
    ).toEqual([]);
  });

  it('names owners that exist, and shares only with a file outside the owner', () => {
    const files = new Set(filesUnder('src', '.ts'));
    const exists = (owner: string) => (owner.endsWith('/') ? [...files].some((file) => file.startsWith(owner)) : files.has(owner));
    const problems = Object.entries(owners).flatMap(([table, entry]) => [
      ...(exists(entry.owner) ? [] : [`${table}: owner ${entry.owner} is no file or folder of src/`]),
      ...(entry.shared && (!files.has(entry.shared.file) || ownsPath(entry.owner, entry.shared.file))
        ? [`${table}: shared file ${entry.shared.file}`]
        : []),
    ]);
    expect([...problems, ...Object.keys(GENERIC_WRITERS).filter((writer) => !exists(writer))]).toEqual([]);
  });

  it('has each queue table description (QueueTable) in its table’s owner, since the engine writes what it is handed', () => {
    const descriptions = filesUnder('src', '.ts').flatMap((file) => {
      const text = readFileSync(join(root, file), 'utf8');
      return [...text.matchAll(/:\s*QueueTable\s*=\s*\{[^]*?\btable:\s*'([a-z_][a-z0-9_]*)'/g)].map((m) => ({ file, table: m[1]! }));
    });
    expect(descriptions.map((d) => d.table).sort()).toEqual(['outbound_deliveries', 'stripe_calls', 'stripe_events', 'webhook_events']);
    expect(descriptions.filter((d) => !owners[d.table] || !ownsPath(owners[d.table]!.owner, d.file))).toEqual([]);
  });
});

describe('the write scan', () => {
  const tables = new Set(['jobs', 'holds', 'alerts']);
  const scan = (text: string) =>
    writesIn({ file: 'src/x.ts', line: 1, text }, tables).map(
      (w) => `${w.verb} ${w.table}${w.columns ? ` (${w.columns.join(', ')})` : ''}`,
    );

  it('finds each form of write: insert, update, delete, merge, truncate, copy, in CTEs, qualified or quoted', () => {
    expect(scan('insert into jobs (id) values ($1)')).toEqual(['insert jobs']);
    expect(scan('INSERT INTO public."jobs" (id) values ($1)')).toEqual(['insert jobs']);
    expect(scan('update only jobs j set state = $2, updated_at = now() where j.id = $1')).toEqual(['update jobs (state, updated_at)']);
    expect(scan('delete from holds where id = $1')).toEqual(['delete holds']);
    expect(scan('merge into holds h using x on true when matched then delete')).toEqual(['merge holds']);
    expect(scan('truncate table alerts')).toEqual(['truncate alerts']);
    expect(scan('copy alerts (id, kind) from stdin')).toEqual(['copy alerts']);
    expect(scan('with bumped as (update jobs set event_seq = event_seq + 1 returning id) select 1')).toEqual(['update jobs (event_seq)']);
    expect(scan('with gone as (\n  delete from\n    holds where id = $1 returning *) select 1')).toEqual(['delete holds']);
    expect(scan(`update ${DYNAMIC} w set state = $1`)).toEqual([`update ${DYNAMIC} (state)`]);
  });

  it('reads an ON CONFLICT … DO UPDATE as a write of the inserted table only, and ignores reads, copies out and prose', () => {
    expect(scan('insert into alerts as a (id) values ($1) on conflict (id) do update set id = excluded.id')).toEqual(['insert alerts']);
    expect(scan('select * from jobs for update')).toEqual([]);
    expect(scan('copy jobs to stdout')).toEqual([]);
    expect(scan('update the jobs list, then delete from the queue')).toEqual([]);
    expect(scan('update unknown_table set x = 1')).toEqual([]);
  });

  it('reads the columns of an UPDATE up to its FROM, WHERE, RETURNING or closing parenthesis', () => {
    expect(setColumns(' j set event_seq = j.event_seq + c.n\n from unnest($1) as c where j.id = c.id')).toEqual(['event_seq']);
    expect(setColumns(' set a = coalesce(b, (select 1)), "c" = case when x then 1 else 2 end returning *')).toEqual(['a', 'c']);
    expect(setColumns(' set a = 1)')).toEqual(['a']);
  });

  it('reports a write outside its owner with the file, the table and the owner', () => {
    const write: Write = { file: 'src/api/routes/jobs.ts', line: 7, verb: 'update', table: 'jobs', columns: ['state'] };
    expect(violation(write)).toBe(
      'src/api/routes/jobs.ts:7: update jobs outside its owner src/ledger/ (src/db/table-owners.ts): call a named function of src/ledger/ instead',
    );
    expect(violation({ ...write, file: 'src/ledger/locked-job.ts' })).toBeNull();
    expect(violation({ ...write, file: 'src/queue/enqueue.ts', columns: ['event_seq'] })).toBeNull();
    expect(violation({ ...write, file: 'src/queue/enqueue.ts', columns: ['event_seq', 'state'] })).toMatch(
      /enqueue\.ts:7: update jobs \(state\): this file may only update event_seq/,
    );
    expect(violation({ ...write, file: 'src/queue/enqueue.ts', verb: 'insert', columns: null })).toMatch(/may only update event_seq/);
    expect(violation({ ...write, file: 'src/queue/engine/statements.ts', table: DYNAMIC })).toBeNull();
    expect(violation({ ...write, file: 'src/ledger/x.ts', table: DYNAMIC })).toMatch(/outside GENERIC_WRITERS/);
  });
});
