import { mapDatabaseError } from '../db/errors.js';
import type { Pool } from '../db/pool.js';
import { deliveryKey, persistDeliveries, wakerFor, type AttemptRecord, type NewEvent } from '../queue/index.js';
import { processConfig } from '../config/index.js';
import { GroupCommit } from './group-commit.js';

/** What intake writes for one delivery: its accepted event, or an attempt alone. */
export type DeliveryWrite = { event: NewEvent } | { attempt: AttemptRecord };

/**
 * Concurrent group writes per process. Two keep one group committing while the next
 * forms, so the database's commit flush and Node's request handling overlap; measured
 * in bench/RESULTS.md.
 */
const MAX_IN_FLIGHT = processConfig().intakeGroupsInFlight; // TALLY_INTAKE_GROUPS_IN_FLIGHT
const MAX_GROUP = processConfig().intakeMaxGroup; // TALLY_INTAKE_MAX_GROUP

/**
 * Intake's writes, group-committed (group-commit.ts): each delivery is answered only after
 * the commit of the statement that wrote it. Resolves true when the delivery's event was
 * inserted (or its attempt recorded), false when a concurrent delivery of the same key
 * committed first.
 */
export class DeliveryWriter {
  private readonly group: GroupCommit<DeliveryWrite, boolean>;

  constructor(private readonly pool: Pool) {
    this.group = new GroupCommit((writes) => this.writeGroup(writes), { maxInFlight: MAX_IN_FLIGHT, maxGroup: MAX_GROUP });
  }

  write(delivery: DeliveryWrite): Promise<boolean> {
    return this.group.submit(delivery);
  }

  set onGroup(listener: ((size: number) => void) | null) {
    this.group.onGroup = listener;
  }

  private async writeGroup(writes: DeliveryWrite[]): Promise<boolean[]> {
    // Two deliveries of one key in a group: the first is written, the later ones are
    // answered as raced (the caller then reads the first back, as for any race).
    const seen = new Set<string>();
    const events: NewEvent[] = [];
    const attempts: AttemptRecord[] = [];
    const firsts = writes.map((w) => {
      if ('attempt' in w) {
        attempts.push(w.attempt);
        return true;
      }
      const key = deliveryKey(w.event.provider, w.event.eventKey);
      if (seen.has(key)) return false;
      seen.add(key);
      events.push(w.event);
      return true;
    });
    const inserted = await persistDeliveries(this.pool, events, attempts).catch((error: unknown) => {
      throw mapDatabaseError(error);
    });
    if (inserted.size > 0) wakerFor(this.pool).eventsAccepted();
    return writes.map((w, i) => firsts[i]! && ('attempt' in w || inserted.has(deliveryKey(w.event.provider, w.event.eventKey))));
  }
}

const writers = new WeakMap<Pool, DeliveryWriter>();

export function deliveryWriterFor(pool: Pool): DeliveryWriter {
  let writer = writers.get(pool);
  if (!writer) writers.set(pool, (writer = new DeliveryWriter(pool)));
  return writer;
}
