import type { Pool } from '../db/pool.js';
import { withTransaction } from '../db/transaction.js';
import { resumeAbandonedFetch } from '../ledger/index.js';
import { discardDeadEvent, type DiscardResult } from '../queue/index.js';

/**
 * An operator's discard of a dead-lettered event (POST /v1/events/{provider}/{key}/discard,
 * `tally discard`): the event is set aside for good (queue/), and in the same transaction a
 * job its usage fetch had left usage_pending goes back where the fetch found it (ledger/):
 * no fetch is under way any more. Found by the whole-service simulation (seed 1).
 */
export async function discardEvent(
  pool: Pool,
  request: { provider: string; eventKey: string; by: string; note: string },
): Promise<DiscardResult> {
  return withTransaction(pool, (tx) =>
    discardDeadEvent(tx, request, async (event) => {
      await resumeAbandonedFetch(tx, event.job_id);
    }),
  );
}
