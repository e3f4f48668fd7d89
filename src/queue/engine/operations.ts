import type { Queryable } from '../../db/pool.js';
import { claimSql, deadLetterSql, extendLeasesSql, fencedWriteSql, lockDueSql, readBackSql, retrySql } from './statements.js';
import type { FencedClaim, QueueTable } from './table.js';

/** The engine's operations: each runs one statement of statements.ts. */

function fenceValues(claim: FencedClaim): string[] {
  return [...claim.key.map(String), claim.token.toString()];
}

/** Claims up to `limit` due rows for `leaseSeconds` (statements.ts: claimSql). */
export async function claimDue<Row extends object>(db: Queryable, table: QueueTable, limit: number, leaseSeconds: number): Promise<Row[]> {
  const text = claimSql(table, limit);
  const name = table.claim.plan === 'prepared' ? `${table.name}_claim_${limit}` : undefined;
  const result = await db.query<Row>({ name, text, values: [leaseSeconds] });
  return result.rows;
}

/**
 * Locks up to `limit` due rows in the caller's transaction without claiming them
 * (statements.ts: lockDueSql): no lease, no write; each row comes with a fresh token for
 * the caller's fenced write to stamp. Planned as the claim is (table.claim.plan).
 */
export async function lockDue<Row extends object>(tx: Queryable, table: QueueTable, limit: number): Promise<Row[]> {
  const text = lockDueSql(table, limit);
  const name = table.claim.plan === 'prepared' ? `${table.name}_lock_due_${limit}` : undefined;
  const result = await tx.query<Row>({ name, text });
  return result.rows;
}

/**
 * Claims one named row now, whatever its due time, by the same rules otherwise: a live
 * claim, a finished row or an ineligible one is not taken (null).
 */
export async function claimNamed<Row extends object>(
  db: Queryable,
  table: QueueTable,
  key: readonly (string | bigint)[],
  leaseSeconds: number,
): Promise<Row | null> {
  const result = await db.query<Row>({ name: `${table.name}_claim_named`, text: claimSql(table, 1, true), values: [leaseSeconds, ...key.map(String)] });
  return result.rows[0] ?? null;
}

/** Extends the leases of claims still current (fenced by each token); returns how many. */
export async function extendLeases(db: Queryable, table: QueueTable, claims: readonly FencedClaim[], leaseSeconds: number): Promise<number> {
  if (claims.length === 0) return 0;
  const keys = table.key.map((_, i) => claims.map((c) => String(c.key[i])));
  const result = await db.query({
    name: `${table.name}_extend_leases`,
    text: extendLeasesSql(table),
    values: [...keys, claims.map((c) => c.token.toString()), leaseSeconds],
  });
  return result.rowCount ?? 0;
}

/** A queue's own kind of retry: more columns it sets (constant SQL), under its own statement name. */
export interface RetryVariant {
  readonly name: string;
  readonly also: string;
}

/** Back to the retry state, due in `delayMs`, if the claim is still current. False: lost, nothing written. */
export async function retryLater(
  db: Queryable,
  table: QueueTable,
  claim: FencedClaim,
  delayMs: number,
  error: string | null,
  variant?: RetryVariant,
): Promise<boolean> {
  const result = await db.query({
    name: variant ? `${table.name}_${variant.name}` : `${table.name}_retry`,
    text: retrySql(table, variant?.also ?? null),
    values: [...fenceValues(claim), delayMs, ...(table.error ? [error] : [])],
  });
  return result.rowCount === 1;
}

/** Dead-letters the row if the claim is still current. False: lost, nothing written. */
export async function deadLetter(db: Queryable, table: QueueTable, claim: FencedClaim, error: string | null): Promise<boolean> {
  const result = await db.query({
    name: `${table.name}_dead_letter`,
    text: deadLetterSql(table),
    values: [...fenceValues(claim), ...(table.error ? [error] : [])],
  });
  return result.rowCount === 1;
}

/**
 * A queue's own fenced write (statements.ts: fencedWriteSql), `values` numbered from
 * $(k+2). False: the claim was lost and nothing was written.
 */
export async function writeFenced(
  db: Queryable,
  table: QueueTable,
  claim: FencedClaim,
  write: { name: string; set: string; values?: readonly unknown[] },
): Promise<boolean> {
  const result = await db.query({
    name: `${table.name}_${write.name}`,
    text: fencedWriteSql(table, write.set),
    values: [...fenceValues(claim), ...(write.values ?? [])],
  });
  return result.rowCount === 1;
}

/**
 * What a row says of a claim after a COMMIT whose answer was lost, once the in-doubt
 * transaction has ended: 'committed' — a fenced write under this claim moved the row out
 * of the claimed state, a write only that transaction could have made; 'still_claimed' —
 * nothing of it committed and the claim is still ours, so writing again is safe;
 * 'moved_on' — another claim took the row since: not ours to write any more.
 * `wait`: wait for the in-doubt transaction on the row itself (FOR SHARE), for a caller
 * that holds no other lock it would hold.
 */
export type ReadBack = 'committed' | 'still_claimed' | 'moved_on';

export async function readBack(db: Queryable, table: QueueTable, claim: FencedClaim, wait: boolean): Promise<ReadBack> {
  const result = await db.query<{ state: string; token: bigint | string | null }>({
    name: `${table.name}_read_back${wait ? '_wait' : ''}`,
    text: readBackSql(table, wait),
    values: claim.key.map(String),
  });
  const row = result.rows[0];
  if (!row || row.token === null || BigInt(row.token) !== claim.token) return 'moved_on';
  return row.state === table.states.claimed ? 'still_claimed' : 'committed';
}
