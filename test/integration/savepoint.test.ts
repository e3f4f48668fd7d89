import { describe, expect, it } from 'vitest';
import type { PoolClient } from '../../src/db/pool.js';
import { withSavepoint, withTransaction } from '../../src/db/transaction.js';
import { freshDatabase } from '../support/database.js';

const db = await freshDatabase({ max: 4 });

/** A table of this transaction only, with a unique value so a step can fail for real. */
async function scratch(tx: PoolClient): Promise<void> {
  await tx.query('create temp table scratch (value text constraint scratch_value_key unique) on commit drop');
}

async function values(tx: PoolClient): Promise<string[]> {
  return (await tx.query<{ value: string }>('select value from scratch order by value')).rows.map((r) => r.value);
}

describe('withSavepoint', () => {
  it('keeps the writes of a step that succeeds and returns its result', async () => {
    const seen = await withTransaction(db.pool, async (tx) => {
      await scratch(tx);
      const result = await withSavepoint(tx, 'step', async () => {
        await tx.query(`insert into scratch values ('a')`);
        return 42;
      });
      return { result, rows: await values(tx) };
    });
    expect(seen).toEqual({ result: 42, rows: ['a'] });
  });

  it('undoes only the failed step: the writes before it stay, the transaction goes on, the error is the step\'s', async () => {
    const seen = await withTransaction(db.pool, async (tx) => {
      await scratch(tx);
      await tx.query(`insert into scratch values ('before')`);
      const failure = await withSavepoint(tx, 'step', async () => {
        await tx.query(`insert into scratch values ('inside')`);
        await tx.query(`insert into scratch values ('before')`); // unique violation: the transaction is aborted
      }).catch((error: unknown) => error);
      // Without the rollback to the savepoint, PostgreSQL would refuse this statement (25P02).
      await tx.query(`insert into scratch values ('after')`);
      return { failure, rows: await values(tx) };
    });
    expect(seen.rows).toEqual(['after', 'before']);
    expect(seen.failure).toMatchObject({ code: '23505', constraint: 'scratch_value_key' });
  });

  it('rethrows an error that is not the database\'s unchanged', async () => {
    const thrown = new RangeError('not a database error');
    const caught = await withTransaction(db.pool, async (tx) => {
      await scratch(tx);
      return withSavepoint(tx, 'step', async () => {
        await tx.query(`insert into scratch values ('x')`);
        throw thrown;
      }).catch(async (error: unknown) => ({ error, rows: await values(tx) }));
    });
    expect(caught).toEqual({ error: thrown, rows: [] });
  });

  it('refuses a name that is not a plain SQL identifier (it is spliced into the statement)', async () => {
    await withTransaction(db.pool, async (tx) => {
      await expect(withSavepoint(tx, 'a; drop table jobs', async () => 1)).rejects.toThrow(/savepoint name/);
    });
  });
});
