/**
 * Group commit: concurrent callers share one write. A caller's item is written at once
 * when fewer than `maxInFlight` writes are running (an idle service adds no delay to a
 * lone delivery); otherwise it waits for one to finish, and the next write takes every
 * item that queued meanwhile (up to `maxGroup`). So groups grow with the load by
 * themselves, with no timer: the coalescing window is the time one write takes.
 *
 * A write that fails for a group of several is done again for each item on its own, so
 * that one bad item gets its own error and never fails the others; the write must
 * therefore be safe to repeat (intake's is: keyed by event key and attempt id).
 *
 * Hand-written: the job queues on npm batch on a timer or a size, not on "while the
 * previous write is in flight", which is what keeps a lone call undelayed.
 */
export interface GroupCommitOptions {
  /** writes running at once; more items wait and go in the next group */
  maxInFlight: number;
  /** items in one write at most */
  maxGroup: number;
}

export type GroupWrite<T, R> = (items: T[]) => Promise<R[]>;

interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit<T, R> {
  private readonly waiting: Waiting<T, R>[] = [];
  private inFlight = 0;
  /** sizes of the groups written, for metrics and the benchmark */
  onGroup: ((size: number) => void) | null = null;

  constructor(
    private readonly write: GroupWrite<T, R>,
    private readonly options: GroupCommitOptions,
  ) {
    if (options.maxInFlight < 1 || options.maxGroup < 1) throw new RangeError('maxInFlight and maxGroup must be at least 1');
  }

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.drain();
    });
  }

  private drain(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length > 0) {
      const group = this.waiting.splice(0, this.options.maxGroup);
      this.inFlight++;
      void this.run(group).finally(() => {
        this.inFlight--;
        this.drain();
      });
    }
  }

  private async run(group: Waiting<T, R>[]): Promise<void> {
    this.onGroup?.(group.length);
    try {
      const results = await this.write(group.map((w) => w.item));
      if (results.length !== group.length) throw new Error(`a group write of ${group.length} items answered ${results.length}`);
      group.forEach((w, i) => w.resolve(results[i]!));
    } catch (error) {
      if (group.length === 1) {
        group[0]!.reject(error);
        return;
      }
      await Promise.all(group.map((w) => this.runAlone(w)));
    }
  }

  private async runAlone(waiting: Waiting<T, R>): Promise<void> {
    try {
      const [result] = await this.write([waiting.item]);
      waiting.resolve(result!);
    } catch (error) {
      waiting.reject(error);
    }
  }
}
