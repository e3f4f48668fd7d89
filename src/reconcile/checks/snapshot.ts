import type { Pool, Queryable } from '../../db/pool.js';
import { withTransaction } from '../../db/transaction.js';

/**
 * For checks that read several statements and recompute in TypeScript (grant_drift,
 * allocation_mismatch): every statement must see the same instant — a grant read before a
 * posting committed and its entries read after would be drift that never was — so they run
 * in one read-only REPEATABLE READ transaction: one snapshot, no lock taken. Given a client
 * rather than a pool, the caller's transaction is used as it is.
 */
export async function inOneSnapshot<T>(db: Queryable, read: (tx: Queryable) => Promise<T>): Promise<T> {
  if (!('connect' in db)) return read(db);
  return withTransaction(
    db as Pool,
    async (tx) => {
      await tx.query('set transaction read only');
      // The cursors below are read to the end: plan them for all their rows, not the first.
      await tx.query('set local cursor_tuple_fraction = 1');
      return read(tx);
    },
    { isolation: 'repeatable read' },
  );
}

/** Rows fetched at a time from a cursor: a table of millions streams through a few MB. */
const FETCH_ROWS = 5000;

/**
 * Streams a query's rows through a cursor, a page at a time, in its order (inside
 * inOneSnapshot's transaction: a cursor lives in one). `rowMode: 'array'` would be faster
 * still; the named columns keep the checks readable.
 */
export async function eachRow<R>(tx: Queryable, name: string, sql: string, values: unknown[], onRow: (row: R) => void): Promise<void> {
  await tx.query(`declare ${name} no scroll cursor for ${sql}`, values);
  for (;;) {
    const page = await tx.query<R & object>(`fetch forward ${FETCH_ROWS} from ${name}`);
    for (const row of page.rows) onRow(row);
    if (page.rows.length < FETCH_ROWS) break;
  }
  // (a failure above rolls the transaction back, and the cursor with it)
  await tx.query(`close ${name}`);
}
