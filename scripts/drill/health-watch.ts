/**
 * What a load balancer's readiness probe sees during the drill: GET /healthz every
 * 100 ms, each change of answer kept with its time (200 ok, 503 database_unavailable,
 * no answer at all).
 */

export interface HealthChange {
  at: number;
  /** 0: no answer */
  status: number;
}

const EVERY_MS = 100;

export class HealthWatch {
  readonly changes: HealthChange[] = [];
  private timer: NodeJS.Timeout | null = null;
  private busy = false;

  constructor(private readonly baseUrl: string) {}

  start(): void {
    this.timer = setInterval(() => void this.look(), EVERY_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  get current(): number | null {
    return this.changes.at(-1)?.status ?? null;
  }

  /** Milliseconds /healthz answered other than 200 within [from, to). */
  unhealthyMs(from: number, to: number): number {
    let total = 0;
    let state = [...this.changes].reverse().find((c) => c.at <= from)?.status ?? 200;
    let since = from;
    for (const change of this.changes.filter((c) => c.at > from && c.at < to)) {
      if (state !== 200) total += change.at - since;
      state = change.status;
      since = change.at;
    }
    if (state !== 200) total += to - since;
    return total;
  }

  private async look(): Promise<void> {
    // A probe still waiting for its answer is not stacked on.
    if (this.busy) return;
    this.busy = true;
    const status = await fetch(`${this.baseUrl}/healthz`, { signal: AbortSignal.timeout(2_000) })
      .then((r) => r.status)
      .catch(() => 0);
    this.busy = false;
    if (status !== this.current) this.changes.push({ at: Date.now(), status });
  }
}
