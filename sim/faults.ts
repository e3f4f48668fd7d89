import type pg from 'pg';
import { Random } from './random.js';
import type { CommitCuttingProxy } from './commit-cutting-proxy.js';
import type { SimOpenAi } from './openai.js';
import type { LocalStripe } from './stripe.js';
import type { TallyProcess } from './world.js';

/**
 * The faults of a run (--faults), drawn from the seed: which fault and how long until the
 * next. They happen to the real processes and connections — a SIGKILL of a worker or of
 * `serve` (started again a moment later), a worker started with a failpoint so that it
 * kills itself at a named instant of a settlement, and `pg_terminate_backend` on Tally's
 * connections. Paused around quiescent checks (every process up).
 */

export const FAULT_KINDS = ['kill_worker', 'kill_serve', 'failpoint', 'terminate_backends', 'stripe_500', 'stripe_hang', 'stripe_lost_answer', 'lost_commit', 'usage_fetch_500', 'usage_fetch_hang'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** every failpoint a worker passes (its settlements and its payment queues); serve's own is intake.after_commit */
/** How long a Stripe or usage-fetch fault waits for a request to hit */
const FAULT_WINDOW_MS = 3_000;

const FAILPOINTS = [
  'worker.after_claim',
  'settle.before_commit',
  'settle.after_extension',
  'worker.after_commit',
  'payments.before_call',
  'payments.after_call',
];

export class Faults {
  readonly counts: Record<FaultKind, number> = {
    kill_worker: 0,
    kill_serve: 0,
    failpoint: 0,
    terminate_backends: 0,
    stripe_500: 0,
    stripe_hang: 0,
    stripe_lost_answer: 0,
    lost_commit: 0,
    usage_fetch_500: 0,
    usage_fetch_hang: 0,
  };
  private readonly random: Random;
  private paused = 0;
  private stopped = false;
  private loop: Promise<void> | null = null;

  constructor(
    seed: number,
    private readonly serve: TallyProcess,
    private readonly workers: TallyProcess[],
    private readonly pool: pg.Pool,
    private readonly stripe: LocalStripe | null = null,
    private readonly proxy: CommitCuttingProxy | null = null,
    private readonly openai: SimOpenAi | null = null,
  ) {
    this.random = new Random(seed ^ 0xfa17);
  }

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  /** Runs `task` with no fault starting meanwhile, every process up. */
  async quiet<T>(task: () => Promise<T>): Promise<T> {
    this.paused++;
    try {
      await this.revive();
      this.calmStripe();
      return await task();
    } finally {
      this.paused--;
    }
  }

  /**
   * A Stripe fault hits the requests of the next 3 s, not whatever request comes next: left
   * pending, faults would pile up faster than a call retried with backoff comes back, and
   * starve it (the first soak's checkout got no answer for 120 s that way).
   */
  private forgetStripeFaults(): void {
    clearTimeout(this.stripeWindow);
    const stripe = this.stripe!;
    this.stripeWindow = setTimeout(() => stripe.clearFaults(), FAULT_WINDOW_MS);
    this.stripeWindow.unref();
  }

  private stripeWindow: NodeJS.Timeout | undefined;

  /** Stripe answers again: nothing hangs or fails on purpose while a check runs. */
  private calmStripe(): void {
    this.stripe?.clearFaults();
    this.stripe?.releaseHung();
    this.proxy?.disarm();
    this.openai?.calm();
  }

  /** Starts again whatever died (a killed process, a failpoint's SIGKILL), without failpoints. */
  async revive(): Promise<void> {
    for (const child of [this.serve, ...this.workers]) {
      if (child.running) continue;
      // a worker started with a failpoint kills itself there: asked for; any other exit is a crash worth reading
      const own = child.ownExit();
      if (own !== null && !(this.failpointed.has(child) && child.exit === 'SIGKILL')) {
        this.crashes.push(own);
        process.stderr.write(`[sim] ${own}\n`);
      }
      this.failpointed.delete(child);
      child.start();
    }
  }

  /** what processes printed before they exited on their own */
  readonly crashes: string[] = [];
  private readonly failpointed = new Set<TallyProcess>();

  private async run(): Promise<void> {
    while (!this.stopped) {
      await new Promise((resolve) => setTimeout(resolve, this.random.int(300, 2_500)));
      await this.revive();
      if (this.paused > 0 || this.stopped) continue;
      const kind = this.random.pick(
        FAULT_KINDS.filter(
          (k) =>
            (this.stripe !== null || !k.startsWith('stripe_')) &&
            (this.proxy !== null || k !== 'lost_commit') &&
            (this.openai !== null || !k.startsWith('usage_fetch_')),
        ),
      );
      this.counts[kind]++;
      switch (kind) {
        case 'kill_worker':
          await this.random.pick(this.workers).kill('SIGKILL');
          break;
        case 'kill_serve':
          // not again before it has served a while: on a loaded machine a restart takes
          // seconds, and killing it faster than it starts is an outage, not a fault
          if (Date.now() - this.serve.startedAt < 5_000) break;
          await this.serve.kill('SIGKILL');
          await new Promise((resolve) => setTimeout(resolve, this.random.int(100, 800)));
          this.serve.start();
          break;
        case 'failpoint': {
          // a quarter of the time serve, killing itself right after an intake commits (the provider retries: already_accepted)
          if (this.random.chance(0.25)) {
            if (Date.now() - this.serve.startedAt < 5_000) break;
            await this.serve.kill('SIGKILL');
            this.serve.start({ TALLY_FAILPOINTS: 'intake.after_commit' });
            this.failpointed.add(this.serve);
            break;
          }
          const worker = this.random.pick(this.workers);
          await worker.kill('SIGKILL');
          worker.start({ TALLY_FAILPOINTS: this.random.pick(FAILPOINTS) });
          this.failpointed.add(worker);
          break;
        }
        case 'stripe_500':
          // Stripe's next calls fail: Tally answers 503 and the client retries, or its worker retries the call with its key
          this.stripe!.failNext(this.random.int(1, 3), /.*/, this.random.pick([500, 502, 503]));
          this.forgetStripeFaults();
          break;
        case 'stripe_hang': {
          // Stripe's next call is not answered for a while (Tally's client gives up after its timeout, or the answer comes late)
          this.stripe!.hangNext(1);
          const stripe = this.stripe!;
          setTimeout(() => stripe.releaseHung(), this.random.int(500, 4_000));
          this.forgetStripeFaults();
          break;
        }
        case 'stripe_lost_answer':
          // Stripe carries out Tally's next call and the answer is lost: the retry under the same key must get the same object
          this.stripe!.dropAfterCommitNext(1, /^\/v1\/(customers|checkout\/sessions|payment_intents)$/);
          this.forgetStripeFaults();
          break;
        case 'usage_fetch_500':
          // OpenAI's API fails the next usage fetches: retried with backoff, never dead-lettered
          this.openai!.failNext(this.random.int(1, 3));
          break;
        case 'usage_fetch_hang':
          // the next usage fetch is never answered: Tally gives up after its timeout and fetches again
          this.openai!.holdNext();
          break;
        case 'lost_commit':
          // the next COMMIT of a transaction that wrote reaches PostgreSQL, and its answer never reaches Tally
          this.proxy!.arm('after', { ran: /^\s*(insert|update|with)\b/i });
          break;
        case 'terminate_backends':
          await this.pool
            .query(
              `select pg_terminate_backend(pid) from pg_stat_activity
               where datname = current_database() and pid <> pg_backend_pid() and application_name like 'tally%' and application_name <> 'tally-sim'
               order by random() limit 3`,
            )
            .catch(() => {});
          break;
      }
    }
  }
}
