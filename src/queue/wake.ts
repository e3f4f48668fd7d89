import type { Pool, Queryable } from '../db/pool.js';

/** The LISTEN/NOTIFY channel that wakes idle workers. A hint only: workers poll anyway. */
export const EVENTS_CHANNEL = 'tally_events';

/** NOTIFY inside `db`'s transaction: delivered at its COMMIT, dropped with a rollback. */
export async function notifyWorkers(db: Queryable, payload = ''): Promise<void> {
  await db.query('select pg_notify($1, $2)', [EVENTS_CHANNEL, payload]);
}

/** How long a NOTIFY waits for more accepted events to share it. */
const COALESCE_MS = 5;

/**
 * Wakes idle workers after events were accepted. A NOTIFY inside the event's own
 * transaction would take PostgreSQL's global notification-queue lock at every COMMIT,
 * serialising all intake commits on it (bench/RESULTS.md); instead each process sends
 * one NOTIFY, after the commits, for all the events accepted in the last few
 * milliseconds. The notification is only a hint: the events are already durable and
 * workers poll anyway, so a NOTIFY lost to a crash delays, never loses, an event.
 */
export class WorkerWaker {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly pool: Pool) {}

  eventsAccepted(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.pool.query({ name: 'wake_workers', text: 'select pg_notify($1, $2)', values: [EVENTS_CHANNEL, ''] }).catch(() => {
        // the database is down: workers will poll once it is back
      });
    }, COALESCE_MS);
    this.timer.unref();
  }
}

const wakers = new WeakMap<Pool, WorkerWaker>();

export function wakerFor(pool: Pool): WorkerWaker {
  let waker = wakers.get(pool);
  if (!waker) wakers.set(pool, (waker = new WorkerWaker(pool)));
  return waker;
}
