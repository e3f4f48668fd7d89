import type { Pool } from '../db/pool.js';
import { withTransaction } from '../db/transaction.js';
import type { EventClaim } from '../queue/index.js';
import { OutcomeUnknown } from './errors.js';
import type { SettlementRow } from './settlements.js';
import { committedWrite } from './write-decision.js';

/**
 * What one attempt of a settle transaction (settle() or a batch) got to, to tell after a
 * lost COMMIT whether it committed.
 */
export interface InDoubt<T> {
  /** the jobs the transaction locks */
  jobIds: readonly string[];
  /**
   * per event: its claim (if any) and the settlement row this attempt inserted (null:
   * none) — the row's id tells our commit from somebody else's
   */
  written: readonly { claim: EventClaim | undefined; settlement: SettlementRow | null }[];
  /** set once every statement ran: only then can COMMIT have been sent */
  result: T | null;
}

/** How OutcomeUnknown names what is in doubt, and what to settle again. */
export interface InDoubtWords {
  /** `settlement <key>`, `event <provider>/<key>`, `a batch of 3 events` */
  what: string;
  /** `settle the event again`, `settle its events again` */
  again: string;
}

/**
 * The connection broke. If the attempt never got as far as COMMIT it cannot have
 * committed, and settling again is safe (the retry's job lock waits for the dead
 * session to end): null. Otherwise COMMIT may or may not have happened: on a fresh
 * connection, first wait for the in-doubt transaction to end — it holds every job row it
 * locked until its backend is gone — then look for what only that transaction could have
 * written: the settlement row with the id it inserted, or (for a decision with no
 * settlement) the claimed event marked under this claim's fencing token. Found means
 * committed, and the attempt's own result stands. Not found means not committed: null,
 * nothing of it was written, and its events are settled again (settle() writes again; a
 * batch's caller settles each event on its own). A decision with neither changes only
 * state that decide() recomputes, so it is simply settled again (null). A batch is all
 * or nothing, so one probe answers for all of it: its first event with a settlement row,
 * else its first event. Reading back failing too is OutcomeUnknown.
 */
export async function readBack<T>(pool: Pool, attempt: InDoubt<T>, words: InDoubtWords): Promise<T | null> {
  const { jobIds, result } = attempt;
  if (!result) return null;
  const probe = attempt.written.find((w) => w.settlement !== null) ?? attempt.written.find((w) => w.claim !== undefined);
  if (!probe) return null;
  try {
    return await withTransaction(
      pool,
      async (tx) => {
        await tx.query('select 1 from jobs where id = any($1::uuid[]) order by id for share', [jobIds]);
        return (await committedWrite(tx, probe.settlement, probe.claim)) ? result : null;
      },
      { maxAttempts: 1 },
    );
  } catch (error) {
    throw new OutcomeUnknown(
      `${words.what}: the connection was lost around COMMIT and reading it back failed too; ${words.again} once the database answers`,
      { cause: error },
    );
  }
}
