import { userInfo } from 'node:os';
import { processConfig } from '../config/index.js';
import { openDatabase } from '../db/connect.js';
import { migrate } from '../db/migrate.js';
import { discardEvent } from '../jobs/discard.js';
import { discardNoteProblem } from '../queue/index.js';

/**
 * `tally discard PROVIDER EVENT_KEY --note "..."`: the same discard as
 * POST /v1/events/{provider}/{event_key}/discard, for an operator with access to the
 * database. Exit 0 when the event is discarded (now or by an earlier discard), 1 when
 * it is refused (unknown, not dead, no note).
 */
export async function discardCommand(provider: string, eventKey: string, options: { note?: string; json?: boolean }): Promise<void> {
  const problem = discardNoteProblem(options.note);
  if (problem) {
    console.error(`tally discard: ${problem} (--note "...")`);
    process.exitCode = 1;
    return;
  }
  const db = await openDatabase(processConfig(), { max: 2 });
  try {
    await migrate(db.pool);
    const result = await discardEvent(db.pool, { provider, eventKey, by: `cli:${operatorName()}`, note: options.note! });
    if (result === 'not_found') {
      console.error(`tally discard: no event ${eventKey} of provider ${provider}`);
      process.exitCode = 1;
    } else if (result === 'not_dead') {
      console.error(`tally discard: event ${provider}/${eventKey} is not dead-lettered (it is queued or settled); nothing changed`);
      process.exitCode = 1;
    } else if (options.json) {
      console.log(JSON.stringify(result, null, 2));
    } else {
      console.log(
        `discarded ${result.provider}/${result.event_key} (job ${result.job_id}) by ${result.discarded_by} at ${result.discarded_at.toISOString()}: ${result.discard_note}`,
      );
      console.log("The job's hold no longer waits for it: the cancel grace releases it, or tally reconcile --repair once it has expired.");
    }
  } finally {
    await db.close();
  }
}

/** Who ran the command, as far as the machine knows. */
function operatorName(): string {
  try {
    return userInfo().username || 'unknown';
  } catch {
    return 'unknown';
  }
}
