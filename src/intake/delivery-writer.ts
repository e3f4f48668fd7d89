import { mapDatabaseError } from '../db/errors.js';
import type { Pool } from '../db/pool.js';
import { deliveryKey, persistDeliveries, wakerFor, type AttemptRecord, type NewEvent } from '../queue/index.js';
import { DEFAULT_CONFIG, type Config } from '../config/index.js';
import { GroupCommit } from './group-commit.js';

/** What intake writes for one delivery: its accepted event, or an attempt alone. */
export type DeliveryWrite = { event: NewEvent } | { attempt: AttemptRecord };

/** How intake's writes share commits, handed down by the command that starts the API. */
export interface IntakeLimits {
  /**
   * Concurrent group writes (TALLY_INTAKE_GROUPS_IN_FLIGHT). Two keep one group committing
   * while the next forms, so the database's commit flush and Node's request handling
   * overlap; measured in bench/RESULTS.md.
   */
  readonly groupsInFlight: number;
  /** most deliveries one commit writes (TALLY_INTAKE_MAX_GROUP) */
  readonly maxGroup: number;
}

/** The intake limits from the configuration. */
export function intakeLimits(config: Pick<Config, 'intakeGroupsInFlight' | 'intakeMaxGroup'>): IntakeLimits {
  return { groupsInFlight: config.intakeGroupsInFlight, maxGroup: config.intakeMaxGroup };
}

/** What a writer made without limits takes: every setting's default. */
export const DEFAULT_INTAKE_LIMITS: IntakeLimits = intakeLimits(DEFAULT_CONFIG);

/**
 * Intake's writes, group-committed (group-commit.ts): each delivery is answered only after
 * the commit of the statement that wrote it. Resolves true when the delivery's event was
 * inserted (or its attempt recorded), false when a concurrent delivery of the same key
 * committed first.
 */
export class DeliveryWriter {
  private readonly group: GroupCommit<DeliveryWrite, boolean>;

  constructor(
    private readonly pool: Pool,
    limits: IntakeLimits = DEFAULT_INTAKE_LIMITS,
  ) {
    this.group = new GroupCommit((writes) => this.writeGroup(writes), { maxInFlight: limits.groupsInFlight, maxGroup: limits.maxGroup });
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

/**
 * The writer of intake's deliveries on `pool` with the default limits, shared by its
 * callers: what receiveWebhook writes through when it is handed none (an app hands it
 * the one it made with the command's limits).
 */
export function deliveryWriterFor(pool: Pool): DeliveryWriter {
  let writer = writers.get(pool);
  if (!writer) writers.set(pool, (writer = new DeliveryWriter(pool)));
  return writer;
}
