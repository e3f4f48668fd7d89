/**
 * What the operator's probes see during the drill: GET /healthz (a load balancer's
 * readiness probe) or /metrics (a Prometheus scrape) at a steady interval, each change of
 * answer kept with its time (200, 503, no answer at all).
 */

export interface ProbeChange {
  at: number;
  /** 0: no answer */
  status: number;
}

export class ProbeWatch {
  readonly changes: ProbeChange[] = [];
  private timer: NodeJS.Timeout | null = null;
  private busy = false;

  constructor(
    private readonly url: string,
    private readonly everyMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.look(), this.everyMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  get current(): number | null {
    return this.changes.at(-1)?.status ?? null;
  }

  /** Milliseconds it answered other than 200 within [from, to). */
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
    const status = await fetch(this.url, { signal: AbortSignal.timeout(2_000) })
      .then((r) => r.status)
      .catch(() => 0);
    this.busy = false;
    if (status !== this.current) this.changes.push({ at: Date.now(), status });
  }
}
