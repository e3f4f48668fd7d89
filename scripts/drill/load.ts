import { randomUUID } from 'node:crypto';
import type { Backoff, Delivery, PlannedJob, Simulator } from './app.js';
import { untilAnswered } from './client.js';
import { CURRENCY, LIMITS, type Tenant, type World } from './world.js';

/**
 * The traffic of the drill: jobs started at a steady rate, whatever the database is
 * doing, each submitted (Idempotency-Key) and then driven by the simulator through its
 * scenario — webhook deliveries with duplicates under the same webhook-id, re-emissions
 * under new ids, forgeries, reordering, tenant cancels racing completions — plus a
 * steady stream of wallet top-ups. Every caller is a real client: it retries a 5xx or a
 * refused connection with backoff under the same key (the simulator does the same for
 * deliveries), and only a 2xx counts as acknowledged. What was acknowledged is kept, to
 * be looked for after the failover.
 */

export const TOP_UP = '0.250000';
/** A failover must not turn the steady rate into an unbounded pile of waiting jobs. */
export const MAX_JOBS_IN_FLIGHT = 200;

export interface AcknowledgedCredit {
  tenant: Tenant;
  reference: string;
}

export interface LoadOptions {
  jobsPerSecond: number;
  creditEveryMs: number;
  seed: number;
}

export class SteadyLoad {
  /** submissions answered 201, with the scenario the provider then played */
  readonly jobs: PlannedJob[] = [];
  /** genuine deliveries answered 200 (accepted or already_accepted), by webhook-id */
  readonly deliveries = new Map<string, Delivery>();
  readonly credits: AcknowledgedCredit[] = [];
  /** calls answered, after every retry, other than a correct client expects */
  readonly refusals: string[] = [];
  /** ticks that started no job because too many were still waiting */
  skippedTicks = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private creditLoop: Promise<void> | null = null;
  private stopping = false;
  private nextJob = 0;

  constructor(
    private readonly world: World,
    private readonly simulator: Simulator,
    private readonly retry: Backoff,
    private readonly options: LoadOptions,
  ) {}

  start(): void {
    this.stopping = false;
    this.timer = setInterval(() => this.tick(), Math.max(1, Math.round(1000 / this.options.jobsPerSecond)));
    this.creditLoop = this.topUps();
  }

  /** Starts no new work, and waits until everything started was answered. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await this.creditLoop;
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  get jobsInFlight(): number {
    return this.inFlight.size;
  }

  private tick(): void {
    if (this.inFlight.size >= MAX_JOBS_IN_FLIGHT) {
      this.skippedTicks++;
      return;
    }
    const index = this.nextJob++;
    const task = this.runJob(index)
      .catch((error: Error) => void this.refusals.push(`job #${index}: ${error.message}`))
      .finally(() => this.inFlight.delete(task));
    this.inFlight.add(task);
  }

  private async runJob(index: number): Promise<void> {
    const tenant = this.world.tenants[index % this.world.tenants.length]!;
    const key = randomUUID();
    const body = {
      wallet_id: tenant.walletId,
      model: this.world.model,
      provider: this.world.provider,
      provider_job_ref: `pj_${key}`,
      limits: LIMITS,
    };
    const answer = await untilAnswered(this.retry, () => tenant.call('POST', '/v1/jobs', body, { 'idempotency-key': key }));
    if (answer.status !== 201) {
      this.refusals.push(`job ${key}: ${answer.status} ${JSON.stringify(answer.body)}`);
      return;
    }
    // Every kind of scenario comes round, in turn.
    const kinds = this.simulator.SCENARIO_KINDS;
    const submitted = { id: answer.body.id as string, tenantId: tenant.id, model: this.world.model, currency: CURRENCY };
    const planned = this.simulator.planJobs([submitted], LIMITS, this.options.seed + index, [kinds[index % kinds.length]!]);
    this.jobs.push(...planned);
    const report = await this.simulator.simulate(planned, {
      baseUrl: this.world.baseUrl,
      provider: this.world.provider,
      secret: this.world.secret,
      seed: this.options.seed + index,
      concurrency: 4,
      cancelJob: (jobId) => this.cancel(tenant, jobId),
      onDelivery: (result) => {
        if (!result.delivery.forged && result.status === 200) this.deliveries.set(result.delivery.eventId, result.delivery);
      },
    });
    for (const r of report.unexpected)
      this.refusals.push(`delivery ${r.delivery.eventId} (forged: ${r.delivery.forged}): ${r.status} ${r.answer}`);
  }

  /** The tenant's cancel: 202, or 409 job_terminal when the completion settled first — both correct. */
  private async cancel(tenant: Tenant, jobId: string): Promise<void> {
    const answer = await untilAnswered(this.retry, () => tenant.call('POST', `/v1/jobs/${jobId}/cancel`));
    if (answer.status !== 202 && answer.status !== 409)
      this.refusals.push(`cancel ${jobId}: ${answer.status} ${JSON.stringify(answer.body)}`);
  }

  private async topUps(): Promise<void> {
    for (let i = 0; !this.stopping; i++) {
      const tenant = this.world.tenants[i % this.world.tenants.length]!;
      const reference = `drill-topup-${randomUUID()}`;
      const answer = await untilAnswered(this.retry, () =>
        this.world.admin('POST', `/v1/wallets/${tenant.walletId}/credits`, { amount: TOP_UP, reference }, { 'idempotency-key': reference }),
      );
      if (answer.status === 201) this.credits.push({ tenant, reference });
      else this.refusals.push(`credit ${reference}: ${answer.status} ${JSON.stringify(answer.body)}`);
      // The operator's top-ups come at a steady pace, not as fast as the server answers.
      await this.retry.sleep(this.options.creditEveryMs);
    }
  }
}
