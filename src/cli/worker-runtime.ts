import type { Database } from '../db/connect.js';
import { backoff, type BackoffPolicy } from '../backoff.js';
import type { Metrics } from '../api/metrics.js';
import type { Config } from '../config/index.js';
import { dutyIntervals, runDueDuties } from '../duties/duties.js';
import { Worker, type WorkerOptions } from '../worker/worker.js';
import { settleSettings } from '../worker/settle-event.js';
import { divertConnectionFailures, reasonOf, throttleConnectionFailures } from './connection-trouble.js';
import { describeDatabaseUrl } from '../db/hosts.js';

type Log = WorkerOptions['log'];

/**
 * Starts a settlement worker over the command's database, wired to logs and metrics.
 * Connection failures are logged as one line at most every 10 s (serve's worker shares
 * its pool with the API, so it keeps polling rather than pausing).
 */
export async function startWorker(db: Database, config: Config, concurrency: number, log: Log, metrics?: Metrics): Promise<Worker> {
  return await startWorkerWithLog(db, config, concurrency, throttleConnectionFailures(log), metrics);
}

async function startWorkerWithLog(db: Database, config: Config, concurrency: number, log: Log, metrics?: Metrics): Promise<Worker> {
  const worker = new Worker(db.pool, {
    ...settlementOptions(config),
    concurrency,
    databaseUrl: db.url,
    log,
    onOutcome: (outcome, seconds, claim) => {
      const label = outcome.kind === 'settled' ? outcome.result.outcome : outcome.kind;
      metrics?.settleSeconds.observe({ outcome: label, provider: claim.provider }, seconds);
    },
  });
  await worker.start();
  return worker;
}

/** What `serve` and `worker` hand their settlement worker from the configuration. */
export function settlementOptions(
  config: Config,
): Pick<WorkerOptions, 'leaseSeconds' | 'pollIntervalMs' | 'batchSize' | 'firstAttempts' | 'settle' | 'dutyIntervalMs' | 'duties'> {
  const intervals = dutyIntervals(config);
  return {
    leaseSeconds: config.leaseSeconds,
    pollIntervalMs: config.pollIntervalMs,
    batchSize: config.settleBatchSize,
    firstAttempts: config.settleClaim,
    settle: settleSettings(config),
    dutyIntervalMs: 1000,
    duties: (pool, log) => runDueDuties(pool, log, intervals),
  };
}

/** Waits after losing the database: jittered, doubling per attempt up to the cap. */
const DATABASE_RETRY_BACKOFF: BackoffPolicy = { floorMs: 500, firstMs: 1_000, capMs: 10_000 };

/** A connection failure the worker met, and what it was doing then. */
interface Loss {
  error: unknown;
  during: string | undefined;
}

/**
 * The standalone `tally worker`: a Worker that, when the database stops answering,
 * pauses (no claim loop logging a failure per poll), looks for the database again with
 * backoff, one log line per attempt, and resumes on a new pool wherever it answers:
 * the same DATABASE_URL, or the embedded server running.json now names — which is on a
 * new port after the `serve` that owned it stopped and another started it.
 */
export class FollowingWorker {
  private worker: Worker | null = null;
  private stopping = false;
  /** resolves (with the error) when the running worker first fails to reach the database */
  private nextLoss: Promise<Loss> = Promise.resolve({ error: null, during: undefined });
  private lost: ((loss: Loss) => void) | null = null;
  private wakeSleep: (() => void) | null = null;
  private supervision: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Database,
    private readonly config: Config,
    private readonly concurrency: number,
    private readonly log: Log,
    private readonly metrics?: Metrics,
  ) {}

  async start(): Promise<void> {
    this.worker = await this.startOne();
    this.supervision = this.supervise();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.lost?.({ error: null, during: undefined });
    this.wakeSleep?.();
    await this.supervision;
    await this.worker?.stop();
    this.worker = null;
  }

  private async startOne(): Promise<Worker> {
    const lostSignal = new Promise<Loss>((resolve) => (this.lost = resolve));
    this.nextLoss = lostSignal;
    // Every connection failure the worker would log resolves the signal instead; the
    // first one pauses the worker, the later ones (its other loops) are already covered.
    return await startWorkerWithLog(
      this.db,
      this.config,
      this.concurrency,
      divertConnectionFailures(this.log, (error, during) => {
        if (this.lost) return this.lost({ error, during });
        // Already pausing: what the stopping loops meet still gets its line, without a stack.
        this.log.warn({ reason: reasonOf(error) }, during ?? 'the database cannot be reached');
      }),
      this.metrics,
    );
  }

  private async supervise(): Promise<void> {
    while (!this.stopping) {
      const { error, during } = await this.nextLoss;
      if (this.stopping) return;
      this.lost = null;
      // `during` says what the worker was doing (e.g. recording an event's outcome).
      this.log.warn(
        { database: where(this.db.url), reason: reasonOf(error), during },
        'lost the database; settling paused until it answers again',
      );
      await this.worker?.stop();
      this.worker = null;
      const url = await this.findDatabase();
      if (url === null) return; // stopping
      await this.db.reconnect(url);
      try {
        this.worker = await this.startOne();
      } catch (startError) {
        // It answered and then went away again: look once more.
        this.log.warn({ database: where(url), reason: reasonOf(startError) }, 'the database went away while the worker started');
        this.nextLoss = Promise.resolve({ error: startError, during: 'starting' });
        continue;
      }
      this.log.info({ database: where(url) }, 'database answers; settling resumed');
    }
  }

  /** Polls db.locate() with backoff; one line per failed attempt. Null when stopped meanwhile. */
  private async findDatabase(): Promise<string | null> {
    for (let attempt = 1; !this.stopping; attempt++) {
      const url = await this.db.locate().catch(() => null);
      if (url !== null) return url;
      const waitMs = Math.round(backoff(attempt, DATABASE_RETRY_BACKOFF));
      const what =
        this.db.embedded && !this.db.embedded.owner
          ? 'no embedded PostgreSQL answers in the data folder yet (it comes back when a `tally serve` or other command starts it)'
          : 'the database does not answer yet';
      this.log.warn({ attempt, retry_in_ms: waitMs }, what);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        this.wakeSleep = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeSleep = null;
    }
    return null;
  }
}

/** host:port of a database URL (every host of a multi-host one), without the password. */
function where(url: string): string {
  return describeDatabaseUrl(url);
}

/** Pool settings for processes that settle: a stalled transaction must not outlive its lease. */
export function workerPoolOptions(max: number, leaseSeconds: number) {
  const leaseMs = leaseSeconds * 1000;
  return {
    max,
    statementTimeout: Math.min(30_000, Math.floor(leaseMs / 3)),
    idleInTransactionTimeout: Math.min(30_000, Math.floor(leaseMs / 3)),
  };
}
