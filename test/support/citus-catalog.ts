import type { Queryable } from '../../src/db/pool.js';
import { DISTRIBUTED_TABLES, KEY_DISTRIBUTED_TABLES, REFERENCE_TABLES, TENANT_COLUMN } from '../../src/db/distribution.js';

/**
 * What Citus would refuse, or could not keep, in the schema of a migrated database, read
 * from pg_catalog against src/db/distribution.ts — one sentence per problem, naming the
 * table and the key:
 *
 * - a table in neither list (or in both), or a listed table that does not exist;
 * - a distributed table without a NOT NULL tenant_id;
 * - a primary key, unique constraint or unique index of a distributed table whose key
 *   columns leave tenant_id out (Citus enforces uniqueness inside one shard only);
 * - a foreign key from a distributed table to another that does not pair tenant_id with
 *   tenant_id (Citus checks a foreign key inside one shard only); one to a reference
 *   table is fine;
 * - a foreign key from a reference table to a distributed one (Citus refuses it);
 * - a distributed table listed before a table its foreign keys name (create_distributed_table
 *   needs the referenced table distributed first);
 * - for a table distributed by a key of its own (KEY_DISTRIBUTED_TABLES): that column
 *   missing or nullable, a unique key leaving it out, or a foreign key to or from any other
 *   distributed table (they are not co-located, and Citus keeps no such key).
 */
export async function distributionProblems(db: Queryable, lists: Partial<DistributionLists> = {}, schema = 'public'): Promise<string[]> {
  const distributed = new Set<string>(lists.distributed ?? Object.keys(DISTRIBUTED_TABLES));
  const reference = new Set<string>(lists.reference ?? Object.keys(REFERENCE_TABLES));
  const byKey = new Map<string, string>(
    Object.entries(lists.byKey ?? Object.fromEntries(Object.entries(KEY_DISTRIBUTED_TABLES).map(([t, { column }]) => [t, column]))),
  );
  const problems: string[] = [];

  const tables = await tablesOf(db, schema, [TENANT_COLUMN, ...byKey.values()]);
  const byName = new Map(tables.map((t) => [t.name, t]));
  for (const t of tables) {
    const listed = [distributed.has(t.name), reference.has(t.name), byKey.has(t.name)].filter(Boolean).length;
    if (listed > 1) problems.push(`${t.name} is listed more than once in src/db/distribution.ts`);
    if (listed === 0) {
      problems.push(
        `${t.name} is neither distributed by ${TENANT_COLUMN} nor a reference table: add it to src/db/distribution.ts, with why`,
      );
    }
    const tenant = t.columns.get(TENANT_COLUMN);
    if (distributed.has(t.name) && !tenant) problems.push(`${t.name} is distributed but has no ${TENANT_COLUMN} column`);
    if (distributed.has(t.name) && tenant?.notNull === false) problems.push(`${t.name}.${TENANT_COLUMN} may be null`);
    const key = byKey.get(t.name);
    if (key !== undefined && !t.columns.get(key)) problems.push(`${t.name} is distributed by ${key} but has no such column`);
    if (key !== undefined && t.columns.get(key)?.notNull === false) problems.push(`${t.name}.${key} may be null`);
  }
  for (const name of [...distributed, ...reference, ...byKey.keys()])
    if (!byName.has(name)) problems.push(`${name} is listed in src/db/distribution.ts but no such table exists`);

  /** The column a table is distributed by, if it is distributed. */
  const distributionColumn = (name: string): string | undefined => (distributed.has(name) ? TENANT_COLUMN : byKey.get(name));
  for (const index of await uniqueIndexesOf(db, schema)) {
    const column = distributionColumn(index.table);
    const attribute = column === undefined ? undefined : byName.get(index.table)?.columns.get(column);
    if (!attribute) continue;
    if (!index.keyColumns.includes(attribute.attnum)) {
      problems.push(`${index.table}: unique ${index.kind} ${index.name} ${index.definition} leaves out ${column}`);
    }
  }

  const order = [...distributed];
  for (const fk of await foreignKeysOf(db, schema)) {
    const from = byName.get(fk.table)?.columns.get(TENANT_COLUMN);
    const to = byName.get(fk.references)?.columns.get(TENANT_COLUMN);
    if (reference.has(fk.table) && (distributed.has(fk.references) || byKey.has(fk.references))) {
      problems.push(`${fk.table} is a reference table, but its foreign key ${fk.name} names ${fk.references}, a distributed one`);
    }
    const keyed = [fk.table, fk.references].find((name) => byKey.has(name));
    if (keyed && fk.table !== fk.references && distributionColumn(fk.table) && distributionColumn(fk.references)) {
      problems.push(
        `${fk.table}: foreign key ${fk.name} names ${fk.references}, but ${keyed} is distributed by ${byKey.get(keyed)} apart from it (not co-located)`,
      );
    }
    if (!distributed.has(fk.table) || !distributed.has(fk.references) || !from || !to) continue;
    const paired = fk.columns.some((column, i) => column === from.attnum && fk.referencedColumns[i] === to.attnum);
    if (!paired)
      problems.push(`${fk.table}: foreign key ${fk.name} (${fk.definition}) does not pair ${TENANT_COLUMN} with ${TENANT_COLUMN}`);
    if (fk.table !== fk.references && order.indexOf(fk.references) > order.indexOf(fk.table)) {
      problems.push(
        `${fk.table} is listed before ${fk.references}, which its foreign key ${fk.name} names: distribute ${fk.references} first`,
      );
    }
  }
  return problems;
}

/** The lists, in src/db/distribution.ts's order; a test plants tables of its own in them. */
export interface DistributionLists {
  distributed: string[];
  reference: string[];
  /** table → the column it is distributed by, apart from the tenants' tables */
  byKey: Record<string, string>;
}

interface TableRow {
  name: string;
  /** the table's distribution columns among those asked for, by name */
  columns: Map<string, { attnum: number; notNull: boolean }>;
}

async function tablesOf(db: Queryable, schema: string, columns: string[]): Promise<TableRow[]> {
  const result = await db.query<{ name: string; columns: { name: string; attnum: number; not_null: boolean }[] }>(
    `select c.relname as name,
            coalesce(jsonb_agg(jsonb_build_object('name', a.attname, 'attnum', a.attnum, 'not_null', a.attnotnull))
                       filter (where a.attnum is not null), '[]') as columns
     from pg_class c
     join pg_namespace n on n.oid = c.relnamespace
     left join pg_attribute a on a.attrelid = c.oid and a.attname = any($2::text[]) and not a.attisdropped
     where n.nspname = $1 and c.relkind in ('r', 'p') and not c.relispartition
     group by c.relname
     order by c.relname`,
    [schema, columns],
  );
  return result.rows.map((r) => ({
    name: r.name,
    columns: new Map(r.columns.map((a) => [a.name, { attnum: a.attnum, notNull: a.not_null }])),
  }));
}

interface UniqueIndex {
  table: string;
  name: string;
  kind: 'primary key' | 'constraint' | 'index';
  definition: string;
  /** attnums of the key columns (INCLUDE columns are not part of the key; 0 is an expression) */
  keyColumns: number[];
}

async function uniqueIndexesOf(db: Queryable, schema: string): Promise<UniqueIndex[]> {
  const result = await db.query<{
    table: string;
    name: string;
    primary: boolean;
    constraint: boolean;
    definition: string;
    key_columns: number[];
  }>(
    `select t.relname as table, i.relname as name, x.indisprimary as primary,
            exists (select 1 from pg_constraint c where c.conindid = x.indexrelid and c.contype in ('p', 'u')) as constraint,
            pg_get_indexdef(x.indexrelid) as definition,
            (x.indkey::int2[])[0:x.indnkeyatts - 1]::int[] as key_columns
     from pg_index x
     join pg_class i on i.oid = x.indexrelid
     join pg_class t on t.oid = x.indrelid
     join pg_namespace n on n.oid = t.relnamespace
     where n.nspname = $1 and x.indisunique
     order by t.relname, i.relname`,
    [schema],
  );
  return result.rows.map((r) => ({
    table: r.table,
    name: r.name,
    kind: r.primary ? 'primary key' : r.constraint ? 'constraint' : 'index',
    definition: r.definition.replace(/^.* USING \w+ /, ''),
    keyColumns: r.key_columns,
  }));
}

interface ForeignKey {
  table: string;
  name: string;
  references: string;
  definition: string;
  columns: number[];
  referencedColumns: number[];
}

async function foreignKeysOf(db: Queryable, schema: string): Promise<ForeignKey[]> {
  const result = await db.query<{
    table: string;
    name: string;
    references: string;
    definition: string;
    columns: number[];
    referenced_columns: number[];
  }>(
    `select t.relname as table, c.conname as name, r.relname as references, pg_get_constraintdef(c.oid) as definition,
            c.conkey::int[] as columns, c.confkey::int[] as referenced_columns
     from pg_constraint c
     join pg_class t on t.oid = c.conrelid
     join pg_class r on r.oid = c.confrelid
     join pg_namespace n on n.oid = t.relnamespace
     where n.nspname = $1 and c.contype = 'f'
     order by t.relname, c.conname`,
    [schema],
  );
  return result.rows.map((r) => ({
    table: r.table,
    name: r.name,
    references: r.references,
    definition: r.definition,
    columns: r.columns,
    referencedColumns: r.referenced_columns,
  }));
}
