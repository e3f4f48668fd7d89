import pg from 'pg';
import type { Pool } from '../db/pool.js';
import { newClient } from '../db/host-selection.js';
import { failpoint } from '../failpoints.js';
import { EVENTS_CHANNEL, claimEvents, type ClaimedEvent } from '../queue/index.js';
import { Poller, type PollingLoop } from '../queue/engine/index.js';
import { DEFAULT_SETTLE_SETTINGS, settleEvent, settleEvents, settleReadyEvents, type EventOutcome, type SettleSettings } from './settle-event.js';
import { LeaseKeeper } from './lease-keeper.js';
import { logEventOutcome } from './outcome-log.js';
import { DEFAULT_CONFIG } from '../config/index.js';
import { ConnectionLost, mapDatabaseError } from '../db/errors.js';
import { OutcomeUnknown } from '../ledger/index.js';

/** What a worker logs to. */
export interface WorkerLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * The periodic duties a worker offers to run at every dutyIntervalMs, composed by the
 * CLI (duties/): the worker only schedules them, and knows nothing of what they are.
 */
export type RunDuties = (pool: Pool, log: WorkerLog) => Promise<void>;

export interface WorkerOptions {
  /** loops of this worker, each settling one batch at a time */
  concurrency: number;
  /**
   * Most events a loop claims and settles in one transaction (TALLY_SETTLE_BATCH_SIZE;
   * DEFAULT_BATCH_SIZE when absent). Batches fill only when events wait: under light load
   * a loop claims what is there, often one event, so latency stays low; under heavy load
   * one commit carries many settlements.
   */
  batchSize?: number;
  /** attempts before a dead letter, the usage fetch's timeout; every setting's default when absent */
  settle?: SettleSettings;
  /**
   * How an event's first attempt is taken (TALLY_SETTLE_CLAIM): 'locked' (the default), by
   * a row lock in the transaction that settles it (settle-event.ts: settleReadyEvents);
   * 'leased', by a leased claim first, as every later attempt is.
   */
  firstAttempts?: 'locked' | 'leased';
  /**
   * claim lease: how long a dead worker's claims stay unavailable. A live worker extends
   * its claims' leases every third of it (worker/lease-keeper.ts), so it must be longer
   * than the statement timeout, not than a whole claim's work.
   */
  leaseSeconds: number;
  /** polling fallback when no notification arrives */
  pollIntervalMs: number;
  /** how often this worker checks whether a periodic duty is due */
  dutyIntervalMs: number;
  /** the duties to offer; none when absent */
  duties?: RunDuties;
  databaseUrl: string;
  log: WorkerLog;
  onOutcome?: (outcome: EventOutcome, seconds: number, claim: ClaimedEvent) => void;
}

/** Most events per batch when the command hands no TALLY_SETTLE_BATCH_SIZE: the setting's default. */
export const DEFAULT_BATCH_SIZE = DEFAULT_CONFIG.settleBatchSize;

/**
 * A settlement worker: `concurrency` loops (queue/engine/poller.ts) that claim a batch,
 * settle it, and claim the next; idle loops sleep until a NOTIFY or the poll interval. Any number
 * of workers in any number of processes may run against one database — claims, leases
 * and fencing tokens make that safe; notifications only make it fast.
 */
export class Worker {
  /** the notification connection and the duties run while this is true; the loops are the poller's */
  private running = false;
  private readonly poller: Poller;
  private listener: pg.Client | null = null;
  private listenTimer: NodeJS.Timeout | null = null;
  private dutyTimer: NodeJS.Timeout | null = null;
  private dutyRun: Promise<void> = Promise.resolve();
  private readonly leases: LeaseKeeper;

  constructor(
    private readonly pool: Pool,
    private readonly options: WorkerOptions,
  ) {
    this.leases = new LeaseKeeper(pool, options.leaseSeconds, options.log);
    this.poller = new Poller({ pollIntervalMs: options.pollIntervalMs, log: options.log });
  }

  async start(): Promise<void> {
    this.running = true;
    this.leases.start();
    await this.listen();
    this.poller.start(Array.from({ length: this.options.concurrency }, () => this.loop()));
    this.dutyTimer = setInterval(() => {
      this.dutyRun = this.dutyRun.then(() => this.duties());
    }, this.options.dutyIntervalMs);
    this.dutyRun = this.duties();
  }

  /** Stops claiming; the events in hand are finished (their claims released by settle). */
  async stop(): Promise<void> {
    this.running = false;
    if (this.dutyTimer) clearInterval(this.dutyTimer);
    if (this.listenTimer) clearTimeout(this.listenTimer);
    this.listenTimer = null;
    await this.poller.stop();
    await this.leases.stop();
    await this.dutyRun;
    await this.listener?.end().catch(() => {});
    this.listener = null;
  }

  private get batchSize(): number {
    return this.options.batchSize ?? DEFAULT_BATCH_SIZE;
  }

  private get settle(): SettleSettings {
    return this.options.settle ?? DEFAULT_SETTLE_SETTINGS;
  }

  /** One loop: its rounds, and what it carries from one round to the next. */
  private loop(): PollingLoop {
    // After a locked batch left events for a lease, or failed: one leased claim next.
    let leaseNext = false;
    return {
      failed: 'claiming events failed; retrying after the poll interval',
      round: async () => {
        if ((this.options.firstAttempts ?? 'locked') === 'locked' && !leaseNext) {
          const found = await this.settleLocked();
          leaseNext = found === 'lease_next';
          return found !== 'none';
        }
        leaseNext = false;
        return await this.settleClaimed(await claimEvents(this.pool, this.batchSize, this.options.leaseSeconds));
      },
    };
  }

  /** Settles a leased batch; false when there was none, or when not even a failure could be recorded. */
  private async settleClaimed(claims: ClaimedEvent[]): Promise<boolean> {
    if (claims.length === 0) return false;
    const release = this.leases.hold(claims);
    failpoint('worker.after_claim');
    const started = performance.now();
    try {
      const outcomes =
        claims.length === 1 ? [await settleEvent(this.pool, claims[0]!, this.settle)] : await settleEvents(this.pool, claims, this.settle);
      const seconds = (performance.now() - started) / 1000;
      outcomes.forEach((outcome, i) => this.report(claims[i]!, outcome, seconds));
      return true;
    } catch (error) {
      // Even recording the failure failed (database down): the leases expire and the
      // events are claimed again.
      this.options.log.warn({ err: error, events: claims.length }, 'could not record the event outcome; the leases expire and the events are claimed again');
      return false;
    } finally {
      release();
    }
  }

  /**
   * One locked batch (settleReadyEvents): 'settled', 'none' (nothing ready, or the
   * database out of reach: wait for the poll interval either way), or
   * 'lease_next' — it left events only a leased claim takes, or it failed and rolled
   * back, and then a leased claim takes the same events, where each failure is recorded
   * as its own (a retry, a dead letter) instead of failing the batch again.
   */
  private async settleLocked(): Promise<'settled' | 'none' | 'lease_next'> {
    const started = performance.now();
    try {
      const batch = await settleReadyEvents(this.pool, this.batchSize);
      if (batch.claims.length > 0) failpoint('worker.after_commit');
      const seconds = (performance.now() - started) / 1000;
      batch.outcomes.forEach((outcome, i) => this.report(batch.claims[i]!, outcome, seconds));
      if (batch.leftForLease) return 'lease_next';
      return batch.claims.length > 0 ? 'settled' : 'none';
    } catch (error) {
      if (isConnectionTrouble(error)) {
        // Committed or not, the events tell the next claim: settled, or still pending.
        this.options.log.warn({ err: error }, 'settling ready events failed on the connection; retrying after the poll interval');
        return 'none';
      }
      this.options.log.warn({ err: error }, 'a locked batch rolled back; its events are claimed with leases, each settled on its own');
      return 'lease_next';
    }
  }

  private report(claim: ClaimedEvent, outcome: EventOutcome, seconds: number): void {
    this.options.onOutcome?.(outcome, seconds, claim);
    logEventOutcome(this.options.log, claim, outcome);
  }

  /**
   * Hand-written rather than pg-listen: it is one client, one LISTEN and a retry timer,
   * and notifications are only a hint here (polling settles everything anyway), so a
   * library's reconnect loop and liveness pings would add a dependency for no guarantee.
   * The connection must also go wherever this worker's databaseUrl points (the CLI's
   * FollowingWorker makes a new Worker when the server moves).
   */
  private async listen(): Promise<void> {
    // newClient: with a multi-host DATABASE_URL the LISTEN goes to the primary (a standby
    // refuses LISTEN), and after a failover the retry below finds the new one.
    const client = newClient(this.options.databaseUrl, { application_name: 'tally-worker-listen' });
    client.on('error', (error) => {
      this.options.log.warn({ err: error }, 'notification connection lost; polling until it is back');
      if (this.listener === client) this.listener = null;
      void client.end().catch(() => {});
      this.listenAgain();
    });
    // One notification is one new event: wake one idle loop, not all of them (every
    // woken loop runs the claim query; a herd of them costs more than the settling).
    client.on('notification', () => this.poller.wakeOne());
    try {
      await client.connect();
      await client.query(`listen ${EVENTS_CHANNEL}`);
      this.listener = client;
    } catch (error) {
      this.options.log.warn({ err: error }, 'cannot LISTEN; polling, and trying again after the poll interval');
      await client.end().catch(() => {});
      // The database may be down for longer than one poll interval (a restart): keep
      // trying, or this worker would poll for the rest of its life.
      this.listenAgain();
    }
  }

  /** Schedules one attempt to get the notification connection back (never two at once). */
  private listenAgain(): void {
    if (!this.running || this.listenTimer) return;
    this.listenTimer = setTimeout(() => {
      this.listenTimer = null;
      if (this.running && !this.listener) void this.listen().catch(() => {});
    }, this.options.pollIntervalMs);
  }

  private async duties(): Promise<void> {
    if (!this.running || !this.options.duties) return;
    try {
      await this.options.duties(this.pool, this.options.log);
    } catch (error) {
      this.options.log.warn({ err: error }, 'periodic duty failed; it runs again at the next interval');
    }
  }
}

/** The database out of reach (not the batch's own fault): lost, unknown, refused. */
function isConnectionTrouble(error: unknown): boolean {
  return error instanceof OutcomeUnknown || mapDatabaseError(error) instanceof ConnectionLost;
}
