/**
 * Which tables of a statement Citus could not route to one tenant's shard, read from its
 * text (test/integration/citus-statements.test.ts). A reading, not a parser: comments and
 * string literals are blanked, then each occurrence of a distributed table — after FROM,
 * JOIN, UPDATE, INTO, USING or a comma — is routed when
 *
 * - it is an INSERT whose column list names tenant_id (each row goes where its value says);
 * - its tenant_id is compared with one value: `x.tenant_id = $n` (or a literal), or with
 *   the tenant_id of an occurrence that is, `x.tenant_id = y.tenant_id` (a co-located
 *   join); an unqualified `tenant_id = $n` counts when the statement has one occurrence.
 *
 * `tenant_id = any($n)`, a join to an unnest() of tenants, or no tenant_id at all: not
 * routed — that statement spans tenants (several shards on Citus). What Citus's planner
 * really does (EXPLAIN: one task) needs a cluster: docs/operations/scaling.md.
 */

const AFTER = new Set(['from', 'join', 'update', 'into', 'using', ',']);
const NOT_ALIAS = new Set([
  'where',
  'on',
  'set',
  'join',
  'left',
  'right',
  'inner',
  'full',
  'cross',
  'natural',
  'using',
  'group',
  'order',
  'limit',
  'returning',
  'values',
  'select',
  'for',
  'union',
  'except',
  'intersect',
  'as',
  'window',
  'having',
  'offset',
  'default',
]);

/** The statement with comments and the insides of string literals blanked, lower case, spaces squeezed. */
export function normalizeSql(sql: string): string {
  return sql
    .replace(/--[^\n]*/g, ' ')
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/\$\$[\s\S]*?\$\$/g, "''")
    .replace(/'(?:[^']|'')*'/g, "''")
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

interface Occurrence {
  table: string;
  /** how the statement names it: its alias, else the table's name */
  name: string;
  insert: boolean;
  columns: string | null;
}

function occurrencesOf(sql: string, tables: ReadonlySet<string>): Occurrence[] {
  const found: Occurrence[] = [];
  const tokens = sql.match(/[a-z_][a-z0-9_$]*|\$\d+|'[^']*'|\S/g) ?? [];
  for (let i = 1; i < tokens.length; i++) {
    const table = tokens[i]!;
    if (!tables.has(table)) continue;
    let before = tokens[i - 1]!;
    if (before === 'only') before = tokens[i - 2] ?? '';
    if (!AFTER.has(before)) continue;
    let next = i + 1;
    if (tokens[next] === 'as') next++;
    const candidate = tokens[next];
    const alias = candidate && /^[a-z_][a-z0-9_]*$/.test(candidate) && !NOT_ALIAS.has(candidate) ? candidate : null;
    const insert = before === 'into';
    let columns: string | null = null;
    if (insert) {
      const rest = sql.slice(sql.indexOf(`into ${table}`) + `into ${table}`.length);
      const list = /^\s*(?:(?:as\s+)?[a-z_]+\s*)?\(([^)]*)\)/.exec(rest);
      columns = list ? list[1]! : null;
    }
    found.push({ table, name: alias ?? table, insert, columns });
  }
  return found;
}

/** The distributed tables this statement touches without naming one tenant: [] when Citus could route it to one shard. */
export function unroutedTables(statement: string, distributed: ReadonlySet<string>): string[] {
  const sql = normalizeSql(statement);
  const occurrences = occurrencesOf(sql, distributed);
  if (occurrences.length === 0) return [];
  const value = String.raw`(?:\$\d+(?:::uuid)?|'')`;
  const pinned = new Set<string>();
  for (const o of occurrences) {
    const column = String.raw`\b${o.name}\.tenant_id\b`;
    if (new RegExp(`${column}\\s*=\\s*${value}|${value}\\s*=\\s*${column}`).test(sql)) pinned.add(o.name);
  }
  if (occurrences.length === 1 && new RegExp(String.raw`(?<![.\w])tenant_id\s*=\s*${value}`).test(sql)) pinned.add(occurrences[0]!.name);
  // Joins on tenant_id carry a pinned occurrence's tenant to the other side.
  const joins = [...sql.matchAll(/\b([a-z_][a-z0-9_]*)\.tenant_id\s*=\s*([a-z_][a-z0-9_]*)\.tenant_id\b/g)].map((m): [string, string] => [
    m[1]!,
    m[2]!,
  ]);
  for (let changed = true; changed;) {
    changed = false;
    for (const [a, b] of joins) {
      if (pinned.has(a) !== pinned.has(b)) {
        pinned.add(a).add(b);
        changed = true;
      }
    }
  }
  return occurrences
    .filter((o) => !(o.insert ? /\btenant_id\b/.test(o.columns ?? '') : pinned.has(o.name)))
    .map((o) => (o.name === o.table ? o.table : `${o.table} ${o.name}`));
}

export interface LoggedStatement {
  application: string;
  /** the prepared statement's name, or null (a simple query, an unnamed one) */
  name: string | null;
  sql: string;
}

/**
 * The statements of a PostgreSQL log written with log_statement = 'all' and
 * log_line_prefix '%m [%p] %a: ' ("LOG:  statement: …" and "LOG:  execute <name>: …",
 * their text over as many lines as it has).
 */
export function loggedStatements(log: string): LoggedStatement[] {
  const records = log.split(/\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \S+ \[\d+\] )/);
  const statements: LoggedStatement[] = [];
  for (const record of records) {
    const match = /^\S+ \S+ \S+ \[\d+\] (.*?): (?:LOG|LOG):  (?:statement|execute ([^:]+)): ([\s\S]*)$/.exec(record.trim());
    if (!match) continue;
    const name = match[2] === undefined || match[2] === '<unnamed>' ? null : match[2];
    statements.push({ application: match[1]!, name, sql: match[3]! });
  }
  return statements;
}

/** How many times the statement names one of `tables` as a table. */
export function occurrencesIn(statement: string, tables: ReadonlySet<string>): number {
  return occurrencesOf(normalizeSql(statement), tables).length;
}
