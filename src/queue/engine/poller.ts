/**
 * The polling runner of every queue's workers (the settlement worker, the outbound
 * deliveries, the payment loops): loops that each run a round — claim and work — again and
 * again. A round that found work is followed at once by the next; one that found none
 * (or failed: logged with its loop's sentence) waits for the poll interval or a wake,
 * whichever comes first: a NOTIFY, work found by another loop, a stop. Stopping starts no
 * new round, wakes the waiting loops at once and waits for the rounds under way, so the
 * claims in hand are finished and recorded.
 */

/** What a Poller logs to: a round that threw. */
export interface PollerLog {
  warn(obj: object, msg?: string): void;
}

/** One loop of a Poller. */
export interface PollingLoop {
  /**
   * One round: true when it found work (the next round follows at once), false when
   * there was none, or when it must give the database a pause (the loop waits as idle).
   */
  round: () => Promise<boolean>;
  /** the warning logged with the error when a round throws; the loop then waits as idle */
  failed: string;
}

export class Poller {
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly wakers = new Set<() => void>();

  constructor(private readonly options: { pollIntervalMs: number; log: PollerLog }) {}

  /** Starts one loop per entry, each running its round until stop(). */
  start(loops: readonly PollingLoop[]): void {
    this.running = true;
    this.loops.push(...loops.map((loop) => this.run(loop)));
  }

  /** Starts no new round, wakes the idle loops, and resolves when the rounds under way are done. */
  async stop(): Promise<void> {
    this.running = false;
    for (const wake of [...this.wakers]) wake();
    await Promise.all(this.loops);
    this.loops = [];
  }

  /** Wakes one idle loop (one new piece of work: not a herd of claims). */
  wakeOne(): void {
    const [first] = this.wakers;
    first?.();
  }

  private async run(loop: PollingLoop): Promise<void> {
    while (this.running) {
      let worked = false;
      try {
        worked = await loop.round();
      } catch (error) {
        this.options.log.warn({ err: error }, loop.failed);
      }
      if (!worked) await this.idle();
    }
  }

  /** Sleeps until the poll interval passes or a wake comes; not at all once stopping. */
  private idle(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, this.options.pollIntervalMs);
      this.wakers.add(wake);
    });
  }
}
