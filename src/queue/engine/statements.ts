import { FENCING_TOKENS, type QueueTable } from './table.js';

/**
 * The engine's statements, generated from a queue's description (table.ts). Each is
 * a plain parameterised statement with a name (`<queue>_<what>`); `engineStatements`
 * lists them all, so each can be printed and read as PostgreSQL runs it
 * (test/integration/queue-engine.test.ts does). Parameters: the key columns are $1…$k
 * and the claim's token $(k+1), then the statement's own values.
 */

function keyParams(table: QueueTable): number {
  return table.key.length;
}

/** The parameter number after the fence's ($1…$k key, $(k+1) token). */
export function firstValueParam(table: QueueTable): number {
  return keyParams(table) + 2;
}

/**
 * The fence: the row, named by its key, while the claim with this token is current.
 * Zero rows means the claim was lost (its lease ran out and another worker took it).
 */
export function fenceSql(table: QueueTable, alias?: string): string {
  const col = (name: string) => (alias ? `${alias}.${name}` : name);
  const key = table.key.map((k, i) => `${col(k.column)} = $${i + 1}`);
  const k = keyParams(table);
  return [...key, `${col(table.token)} = $${k + 1}`, `${col(table.states.column)} = '${table.states.claimed}'`].join(' and ');
}

/** `alias.state in ('…', …)`: literals, so a partial index spelled the same is used. */
export function stateInSql(table: QueueTable, alias: string, states: readonly string[]): string {
  return `${alias}.${table.states.column} in (${states.map((s) => `'${s}'`).join(', ')})`;
}

/** `w.a = ready.a and …`, and the same again as `= any (array(…))` (see claimSql). */
function keyJoin(table: QueueTable): string {
  const equal = table.key.map((k) => `w.${k.column} = ready.${k.column}`).join(' and ');
  const any = table.key.map((k) => `w.${k.column} = any (array(select ${k.column} from ready))`).join(' and ');
  return `${equal}\n       and ${any}`;
}

/**
 * THE claim. Candidates are claimable rows whose `due` has come (or, for a named claim,
 * the one row named by $2…), whose lease (if any) ran out, and that the queue finds
 * eligible; walked in the queue's order, `limit` at most, FOR UPDATE SKIP LOCKED. Each
 * claimed row gets the claimed state, a lease of $1 seconds and a fresh token.
 *
 * The `= any (array(…))` pair repeats the join (it changes no row): it lets the update
 * find its rows by the primary key whatever the planner guesses of `ready`. A generic
 * plan that guessed the batch large hashed `ready` against a sequential scan of the
 * whole table (bench/claim-explain.ts); the arrays are an index condition instead.
 * The limit is written into the text, so any plan of it knows the limit is small.
 *
 * A grouped queue (table.ts: claim.group) takes its batch from one group: `first` finds
 * the first claimable row in the order (and locks it), `ready` walks that group's rows.
 */
export function claimSql(table: QueueTable, limit: number, named = false): string {
  const { states } = table;
  const lease = 'now() + make_interval(secs => $1)';
  const sets = [
    `${states.column} = '${states.claimed}'`,
    `${table.lease} = ${lease}`,
    ...(table.leaseMirror ? [`${table.leaseMirror} = ${lease}`] : []),
    `${table.token} = nextval('${FENCING_TOKENS}')`,
    ...(table.attempts.counted === 'at_claim'
      ? [`${table.attempts.column} = w.${table.attempts.column} + case when w.${states.column} = '${states.claimed}' then 0 else 1 end`]
      : []),
  ];
  return `${readySql(table, limit, named)}
     update ${table.table} w
     set ${sets.join(',\n         ')}
     from ready${table.claim.join ? `, ${table.claim.join.from}` : ''}
     where ${keyJoin(table)}${table.claim.join ? `\n       and ${table.claim.join.on}` : ''}
     returning ${table.claim.returning}`;
}

/**
 * The claim's walk without its write: the same candidates, order, group and limit, FOR
 * UPDATE SKIP LOCKED, but nothing is updated — the rows stay as they are, locked by the
 * caller's transaction until it ends. Each comes with what the claim returns, a fresh
 * token from the one sequence as `fencing_token` (the caller's fenced write stamps it, so
 * a read-back after a lost COMMIT tells its write from anyone else's), and the row's own
 * state and lease (`claim_state`, `claim_lease`), for the caller to tell which rows it
 * may finish in this transaction. No $1: nothing is leased.
 */
export function lockDueSql(table: QueueTable, limit: number): string {
  const returning = table.claim.returning.replace(`w.${table.token}`, `nextval('${FENCING_TOKENS}') as ${table.token}`);
  if (returning === table.claim.returning) throw new Error(`${table.name}: a claim's returning must name w.${table.token}`);
  return `${readySql(table, limit, false)}
     select ${returning}, w.${table.states.column} as claim_state, w.${table.lease} as claim_lease
     from ${table.table} w, ready${table.claim.join ? `, ${table.claim.join.from}` : ''}
     where ${keyJoin(table)}${table.claim.join ? `\n       and ${table.claim.join.on}` : ''}`;
}

/** `with [first as (…), ]ready as (…)`: the claim's candidates, locked (claimSql says how). */
function readySql(table: QueueTable, limit: number, named: boolean): string {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`a claim takes at least one row; got ${limit}`);
  const { states, claim } = table;
  const which = named ? table.key.map((k, i) => `c.${k.column} = $${i + 2}`).join(' and ') : `c.${table.due} <= now()`;
  const claimable = `${stateInSql(table, 'c', states.claimable)}
         and ${which}
         and (c.${table.lease} is null or c.${table.lease} < now())${claim.eligible ? `\n         and ${claim.eligible}` : ''}`;
  const keys = table.key.map((k) => `c.${k.column}`).join(', ');
  // Grouped: the first claimable row names the group, the batch is that group's rows.
  const grouped = claim.group !== null && !named && limit > 1;
  const first = grouped
    ? `first as (
       select c.${claim.group} from ${table.table} c
       where ${claimable}
       order by ${claim.order}
       limit 1
       for update of c skip locked
     ), `
    : '';
  return `with ${first}ready as (
       select ${keys}
       from ${table.table} c${grouped ? ', first' : ''}
       where ${grouped ? `c.${claim.group} = first.${claim.group}
         and ` : ''}${claimable}
       order by ${claim.order}
       limit ${limit}
       for update of c skip locked
     )`;
}

/**
 * Pushes the leases of claims still in hand to $(k+2) seconds from now, each fenced by
 * its token, so a claim another worker took over is never extended. SKIP LOCKED: a row
 * locked now is being written (its outcome, by us or a new owner); waiting behind it
 * would hold up every other lease of the beat, and could deadlock with a batch's writes.
 */
export function extendLeasesSql(table: QueueTable): string {
  const k = keyParams(table);
  const arrays = [...table.key.map((c, i) => `$${i + 1}::${c.type}[]`), `$${k + 1}::bigint[]`].join(', ');
  const names = [...table.key.map((c) => c.column), 'token'].join(', ');
  const on = [...table.key.map((c) => `w.${c.column} = h.${c.column}`), `w.${table.token} = h.token`].join(' and ');
  const lease = `now() + make_interval(secs => $${k + 2})`;
  const sets = [table.lease, ...(table.leaseMirror ? [table.leaseMirror] : [])].map((col) => `${col} = greatest(w.${col}, ${lease})`);
  return `with held as (
       select ${table.key.map((c) => `w.${c.column}`).join(', ')} from ${table.table} w
       join unnest(${arrays}) as h(${names}) on ${on}
       where w.${table.states.column} = '${table.states.claimed}'
       for no key update of w skip locked
     )
     update ${table.table} w
     set ${sets.join(', ')}
     from held where ${table.key.map((c) => `w.${c.column} = held.${c.column}`).join(' and ')}`;
}

/**
 * A failed attempt waits for its retry: the retry state, due in $(k+2) milliseconds, the
 * lease cleared, the error kept as $(k+3) (when the queue keeps one), fenced. `also`:
 * more columns a queue's own kind of retry sets (constants).
 */
export function retrySql(table: QueueTable, also: string | null = null): string {
  const v = firstValueParam(table);
  const sets = [
    `${table.states.column} = '${table.states.retry}'`,
    `${table.due} = now() + make_interval(secs => $${v}::float8 / 1000)`,
    `${table.lease} = null`,
    ...(table.error ? [`${table.error} = $${v + 1}`] : []),
    ...(table.attempts.counted === 'at_failure' ? [`${table.attempts.column} = ${table.attempts.column} + 1`] : []),
    ...(also ? [also] : []),
  ];
  return `update ${table.table}\n     set ${sets.join(', ')}\n     where ${fenceSql(table)}`;
}

/** The dead letter: parked for an operator, the lease cleared, the error kept as $(k+2), fenced. */
export function deadLetterSql(table: QueueTable): string {
  const v = firstValueParam(table);
  const sets = [
    `${table.states.column} = '${table.states.dead}'`,
    `${table.lease} = null`,
    ...(table.error ? [`${table.error} = $${v}`] : []),
    ...(table.attempts.counted === 'at_failure' ? [`${table.attempts.column} = ${table.attempts.column} + 1`] : []),
    ...(table.deadAlso ? [table.deadAlso] : []),
  ];
  return `update ${table.table}\n     set ${sets.join(', ')}\n     where ${fenceSql(table)}`;
}

/**
 * A queue's own fenced write (a settled event, a delivered message): `set` are its
 * columns, with parameters from $(k+2); the lease is cleared with them.
 */
export function fencedWriteSql(table: QueueTable, set: string): string {
  return `update ${table.table}\n     set ${set}, ${table.lease} = null\n     where ${fenceSql(table)}`;
}

/**
 * The read-back after a lost COMMIT: the row's state and token, by key. `wait`: FOR
 * SHARE, so the read waits for an in-doubt transaction that still holds the row.
 */
export function readBackSql(table: QueueTable, wait: boolean): string {
  const key = table.key.map((k, i) => `${k.column} = $${i + 1}`).join(' and ');
  return `select ${table.states.column} as state, ${table.token} as token from ${table.table} where ${key}${wait ? ' for share' : ''}`;
}

/** Every generated statement of a queue, by name, as PostgreSQL receives it. */
export function engineStatements(table: QueueTable, limit: number): Record<string, string> {
  return {
    [`${table.name}_claim`]: claimSql(table, limit),
    [`${table.name}_claim_named`]: claimSql(table, 1, true),
    [`${table.name}_lock_due`]: lockDueSql(table, limit),
    [`${table.name}_extend_leases`]: extendLeasesSql(table),
    [`${table.name}_retry`]: retrySql(table),
    [`${table.name}_dead_letter`]: deadLetterSql(table),
    [`${table.name}_read_back`]: readBackSql(table, true),
  };
}
