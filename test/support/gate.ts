import type { Pool, PoolClient } from '../../src/db/pool.js';

/**
 * A gate for races without sleeps: hold the row locks of some jobs in a transaction
 * of our own, start the contenders (they block on SELECT … FOR UPDATE), wait until
 * PostgreSQL reports that many sessions waiting on a lock, then open the gate. Every
 * contender is then really inside its transaction at the same point when the race
 * starts.
 */
export class JobGate {
  private constructor(
    private readonly pool: Pool,
    private readonly client: PoolClient,
  ) {}

  /** Uses one connection of `pool` (a separate pool is best: contenders need theirs). */
  static async close(pool: Pool, jobIds: string[]): Promise<JobGate> {
    const client = await pool.connect();
    await client.query('begin');
    await client.query('select id from jobs where id = any($1::uuid[]) order by id for update', [jobIds]);
    return new JobGate(pool, client);
  }

  /** Resolves once at least `count` other sessions of this database wait on a lock. */
  async waitForWaiters(count: number, timeoutMs = 20_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const waiting = await lockWaiters(this.pool);
      if (waiting >= count) return waiting;
      if (Date.now() > deadline) throw new Error(`only ${waiting} of ${count} sessions reached the gate within ${timeoutMs} ms`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  async open(): Promise<void> {
    try {
      await this.client.query('commit');
    } finally {
      this.client.release();
    }
  }
}

export async function lockWaiters(pool: Pool): Promise<number> {
  const result = await pool.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity
     where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
  );
  return result.rows[0]!.n;
}
