import type pg from 'pg';
import { waitFor } from './processes.js';

/**
 * After the load stops, the checks wait for the workers to have settled everything
 * acknowledged: every job terminal, and none of its accepted events still pending or
 * claimed (events claimed when the primary died wait out their lease first).
 */
export async function waitForSettled(db: pg.Pool, jobIds: string[], timeoutMs: number): Promise<void> {
  let last: { open_jobs: number; open_events: number } | undefined;
  await waitFor(
    'every acknowledged job settled',
    async () => {
      const { rows } = await db.query<{ open_jobs: number; open_events: number }>(
        `select (select count(*)::int from jobs where id = any($1::uuid[]) and state not in ('captured', 'released')) as open_jobs,
                (select count(*)::int from webhook_events where job_id = any($1::uuid[]) and state in ('pending', 'processing')) as open_events`,
        [jobIds],
      );
      last = rows[0];
      return last!.open_jobs === 0 && last!.open_events === 0;
    },
    timeoutMs,
    200,
  ).catch((error: Error) => {
    throw new Error(`${error.message} (still open: ${JSON.stringify(last)})`);
  });
}

/**
 * Settlements begun on this node after `at`: how many, and when the first committed —
 * its commit timestamp (track_commit_timestamp is on in the drill's formation), not
 * created_at, which is when its transaction began.
 */
export async function settlementsSince(db: pg.Pool, at: Date): Promise<{ count: number; first: Date | null }> {
  const { rows } = await db.query<{ count: number; first: Date | null }>(
    'select count(*)::int as count, min(pg_xact_commit_timestamp(xmin)) as first from settlements where created_at > $1',
    [at],
  );
  return rows[0]!;
}
