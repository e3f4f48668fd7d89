import type { Queryable } from '../db/pool.js';
import { awaitingSql, unsettledSql } from './states.js';

export interface QueueDepth {
  /** accepted events not yet settled (pending or being processed) */
  depth: number;
  /** events dead-lettered and waiting for an operator */
  dead: number;
  /** age in seconds of the oldest event not yet settled; null when none */
  oldestSeconds: number | null;
}

/** The queue's gauges in one read (api/metrics.ts, at scrape time). */
export async function queueDepth(db: Queryable): Promise<QueueDepth> {
  const result = await db.query<{ depth: string; dead: string; oldest: number | null }>(
    `select count(*) filter (where ${unsettledSql()})::text as depth,
            count(*) filter (where state = 'dead')::text as dead,
            extract(epoch from now() - min(received_at) filter (where ${unsettledSql()}))::float8 as oldest
     from webhook_events where ${awaitingSql()}`,
  );
  const row = result.rows[0]!;
  return { depth: Number(row.depth), dead: Number(row.dead), oldestSeconds: row.oldest };
}
