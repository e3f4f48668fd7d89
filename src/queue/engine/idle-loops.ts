/**
 * Where a queue's idle loops wait: each sleeps for the poll interval or until woken (a
 * NOTIFY, work found by another loop, a stop), whichever comes first. The settlement
 * worker, the outbound deliveries and the payment loops all poll the same way.
 */
export class IdleLoops {
  private readonly wakers = new Set<() => void>();

  constructor(private readonly pollIntervalMs: number) {}

  /** Sleeps until the poll interval passes or a wake comes. */
  wait(): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, this.pollIntervalMs);
      this.wakers.add(wake);
    });
  }

  /** Wakes one sleeping loop (one new piece of work: not a herd of claims). */
  wakeOne(): void {
    const [first] = this.wakers;
    first?.();
  }

  /** Wakes them all (stopping). */
  wakeAll(): void {
    for (const wake of [...this.wakers]) wake();
  }
}
