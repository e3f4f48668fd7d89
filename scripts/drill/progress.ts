import type { FetchRecorder } from './fetch-recorder.js';
import type { SteadyLoad } from './load.js';
import { describeStates, type MonitorState } from './monitor-state.js';
import type { ProbeWatch } from './probe-watch.js';

/** A line on stderr every two seconds while the load runs: the formation, the traffic, the failures. */
export class Progress {
  private timer: NodeJS.Timeout | null = null;
  private phase = '';
  private startedAt = Date.now();

  constructor(
    private readonly monitor: MonitorState,
    private readonly load: SteadyLoad,
    private readonly recorder: FetchRecorder,
    private readonly health: ProbeWatch,
  ) {}

  start(phase: string): void {
    this.phase = phase;
    this.startedAt = Date.now();
    this.stop();
    this.timer = setInterval(() => void this.print(), 2_000);
  }

  /** The stage the round is in, shown from the next line on. */
  set(phase: string): void {
    this.phase = phase;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async print(): Promise<void> {
    const states = await this.monitor
      .nodes()
      .then(describeStates)
      .catch(() => 'monitor not answering');
    const failures = this.recorder.between(this.startedAt);
    const by503 = failures.filter((f) => f.status === 503).length;
    const elapsed = ((Date.now() - this.startedAt) / 1000).toFixed(1);
    process.stderr.write(
      `  [+${elapsed.padStart(5)} s ${this.phase}] ${states} · jobs ${this.load.jobs.length} (${this.load.jobsInFlight} in flight) · ` +
        `deliveries ${this.load.deliveries.size} · top-ups ${this.load.credits.length} · 503 ${by503}, other failures ${failures.length - by503} · ` +
        `/healthz ${this.health.current ?? '?'}\n`,
    );
  }
}
