import type { MonitorState } from './monitor-state.js';
import { isWhole } from './monitor-state.js';

/**
 * After the kill, the formation's way back, seen from the monitor every 100 ms: when a
 * node other than the killed one is promoted and writable — it reports `wait_primary`
 * (accepting writes without a standby) or `primary`, as the monitor assigned — and when
 * the formation is whole again: the old primary rewound by pg_auto_failover and back as
 * a synchronous `secondary`.
 */
export class FailoverWatch {
  promotedAt: number | null = null;
  promotedNode: string | null = null;
  wholeAt: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private busy = false;

  constructor(
    private readonly monitor: MonitorState,
    private readonly killedNode: string,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.look(), 100);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async look(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const nodes = await this.monitor.nodes();
      const now = Date.now();
      const promoted = nodes.find(
        (n) => n.name !== this.killedNode && n.reportedState === n.goalState && ['wait_primary', 'primary'].includes(n.reportedState),
      );
      if (this.promotedAt === null && promoted) {
        this.promotedAt = now;
        this.promotedNode = promoted.name;
      }
      if (this.promotedAt !== null && this.wholeAt === null && isWhole(nodes)) this.wholeAt = now;
    } catch {
      // the monitor is not what is being killed; a missed look is made up 100 ms later
    } finally {
      this.busy = false;
    }
  }
}
