import type { Pool } from '../db/pool.js';
import { extendLeases, type ClaimedEvent } from '../queue/index.js';

/**
 * Keeps the leases of a worker's claims from lapsing while the worker is still working
 * on them (issue 11.5). One claim may hold many events, and its usage fetches run one
 * after another, each up to its timeout: against a slow provider API, one lease for the
 * whole claim ran out mid-claim, other workers took the events over, and the first
 * worker's writes were fenced off — work done twice, claims lost.
 *
 * Why a heartbeat rather than "at most one usage fetch per claim": it covers every slow
 * step of a claim, not only fetches (a slow database, the read-back after a lost
 * COMMIT), keeps batches full, and lets the lease say what it should — how long a
 * *dead* worker's claims stay unavailable — instead of an upper bound on a whole
 * claim's work. Fencing still decides: the extension is fenced by each claim's token,
 * so it can never take an event back from a worker that already took it over; if the
 * heartbeat cannot reach the database, the leases run out as before and the events
 * are claimed again.
 *
 * One keeper per worker: every `intervalMs` (a third of the lease, so two beats may be
 * missed before a lease lapses) one UPDATE extends all claims its loops hold.
 */
export class LeaseKeeper {
  private readonly held = new Set<readonly ClaimedEvent[]>();
  private timer: NodeJS.Timeout | null = null;
  private beat: Promise<void> = Promise.resolve();
  private running = false;
  private failing = false;

  constructor(
    private readonly pool: Pool,
    private readonly leaseSeconds: number,
    private readonly log: { warn(obj: object, msg?: string): void },
  ) {}

  get intervalMs(): number {
    return Math.max(50, Math.floor((this.leaseSeconds * 1000) / 3));
  }

  start(): void {
    this.running = true;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.beat;
  }

  /** Keeps `claims` leased until the returned release is called. */
  hold(claims: readonly ClaimedEvent[]): () => void {
    this.held.add(claims);
    return () => void this.held.delete(claims);
  }

  /** The next beat starts an interval after the last one ended: beats never overlap. */
  private schedule(): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.beat = this.extend().finally(() => this.schedule());
    }, this.intervalMs);
  }

  private async extend(): Promise<void> {
    const claims = [...this.held].flat();
    if (claims.length === 0) return;
    try {
      await extendLeases(this.pool, claims, this.leaseSeconds);
      this.failing = false;
    } catch (error) {
      // Logged once per outage: the leases run out and the events are claimed again,
      // which fencing makes safe.
      if (!this.failing) this.log.warn({ err: error, events: claims.length }, 'could not extend the leases of claims in hand; if this lasts, they lapse and are claimed again');
      this.failing = true;
    }
  }
}
