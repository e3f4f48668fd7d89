import { randomUUID } from 'node:crypto';
import { vi } from 'vitest';
import { backoff, sleep } from '../../src/backoff.js';
import {
  SCENARIO_KINDS,
  planJobs,
  simulate,
  type Delivery,
  type DeliveryResult,
  type PlannedJob,
  type SimulatedJob,
} from '../../src/simulator/index.js';
import { LIMITS, type ChaosWorld, type Tenant } from '../support/chaos-world.js';
import { Client, type Answer } from '../support/client.js';

/**
 * The traffic of a failover test, through every `tally serve` at once, recording what
 * Tally acknowledged: per server, waves of jobs — each submitted (Idempotency-Key),
 * then driven by the simulator (webhook deliveries with duplicates, re-emissions,
 * forgeries, reordering, tenant cancels racing completions) — and a stream of wallet
 * credits. Every caller behaves as a real client: a 5xx, a refused connection or 409
 * idempotency_key_in_use is retried with backoff, under the same key; only a 2xx counts
 * as acknowledged. Every 5xx any caller saw is counted, with when.
 */

/** A client retrying a refused call backs off like a provider (src/simulator/sender.ts). */
const CLIENT_RETRY = { floorMs: 'half', firstMs: 100, capMs: 1_000 } as const;
const JOBS_PER_WAVE = 6;
export const CREDIT_AMOUNT = '0.250000';

export interface AcknowledgedCredit {
  tenant: Tenant;
  reference: string;
}

export class FailoverLoad {
  /** genuine deliveries answered 200 (accepted or already_accepted), by webhook-id */
  readonly deliveries = new Map<string, Delivery>();
  /** jobs whose submission was answered 201 */
  readonly jobs: PlannedJob[] = [];
  readonly credits: AcknowledgedCredit[] = [];
  /** each acknowledged job's provider_job_ref (for the provider's usage records) */
  readonly refs = new Map<string, string>();
  /** tenant cancels answered 202 */
  readonly cancels: string[] = [];
  /** answers the simulator did not expect (a genuine delivery not 200, a forgery not 401) */
  readonly unexpected: DeliveryResult[] = [];
  /** our own calls answered other than expected */
  readonly refusals: string[] = [];
  /** every 5xx a caller saw: when (ms since epoch) and on what */
  readonly errors5xx: { at: number; status: number; what: string; body: string }[] = [];
  private stopping = false;
  private loops: Promise<void>[] = [];
  private wave = 0;
  private restoreFetch: (() => void) | null = null;

  constructor(
    private readonly world: ChaosWorld,
    private readonly servers: string[],
    private readonly seed: number,
  ) {}

  start(): void {
    const realFetch = globalThis.fetch;
    const spy = vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
      const response = await realFetch(input, init);
      if (response.status >= 500) {
        const body = await response
          .clone()
          .text()
          .catch(() => '');
        this.errors5xx.push({
          at: Date.now(),
          status: response.status,
          what: `${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`,
          body: body.slice(0, 300),
        });
      }
      return response;
    });
    this.restoreFetch = () => spy.mockRestore();
    for (const server of this.servers) this.loops.push(this.jobWaves(server), this.creditStream(server));
  }

  /** Lets every wave finish (each delivery answered, each call acknowledged) and stops. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops);
    this.restoreFetch?.();
  }

  private async jobWaves(server: string): Promise<void> {
    while (!this.stopping) {
      const wave = ++this.wave;
      const submitted = await Promise.all(
        Array.from({ length: JOBS_PER_WAVE }, (_, i) =>
          this.submitJob(server, this.world.tenants[(wave + i) % this.world.tenants.length]!),
        ),
      );
      // Every kind of scenario comes round, whatever the wave size (tenant cancels among them).
      const kinds = SCENARIO_KINDS.map((_, i) => SCENARIO_KINDS[(i + wave * JOBS_PER_WAVE) % SCENARIO_KINDS.length]!);
      const planned = planJobs(
        submitted.filter((j): j is SimulatedJob => j !== null),
        LIMITS,
        this.seed + wave,
        kinds,
      );
      this.jobs.push(...planned);
      const report = await simulate(planned, {
        baseUrl: server,
        provider: this.world.provider,
        secret: this.world.secret,
        seed: this.seed + wave,
        concurrency: 8,
        cancelJob: (jobId) => this.cancel(server, jobId),
        onDelivery: (result) => {
          if (!result.delivery.forged && result.status === 200) this.deliveries.set(result.delivery.eventId, result.delivery);
        },
      });
      this.unexpected.push(...report.unexpected);
    }
  }

  private async creditStream(server: string): Promise<void> {
    for (let i = 0; !this.stopping; i++) {
      const tenant = this.world.tenants[i % this.world.tenants.length]!;
      const reference = `ha-credit-${randomUUID()}`;
      const answer = await untilAnswered(() =>
        new Client(server).post(
          `/v1/wallets/${tenant.walletId}/credits`,
          { amount: CREDIT_AMOUNT, reference },
          { 'idempotency-key': reference },
        ),
      );
      if (answer.status === 201) this.credits.push({ tenant, reference });
      else this.refusals.push(`credit ${reference}: ${answer.status} ${JSON.stringify(answer.body)}`);
      // The operator tops wallets up at a steady pace, not as fast as the server answers.
      await sleep(40);
    }
  }

  private async submitJob(server: string, tenant: Tenant): Promise<SimulatedJob | null> {
    const key = randomUUID();
    const ref = `pj_${key}`;
    const body = {
      wallet_id: tenant.walletId,
      model: this.world.model,
      provider: this.world.provider,
      provider_job_ref: ref,
      limits: LIMITS,
    };
    const answer = await untilAnswered(() => new Client(server, tenant.apiKey).post('/v1/jobs', body, { 'idempotency-key': key }));
    if (answer.status !== 201) {
      this.refusals.push(`job ${key}: ${answer.status} ${JSON.stringify(answer.body)}`);
      return null;
    }
    const id = answer.body.id as string;
    this.world.tenantOfJob.set(id, tenant);
    this.refs.set(id, ref);
    return { id, tenantId: tenant.id, model: this.world.model, currency: 'USD' };
  }

  /** The tenant's cancel: 202, or 409 job_terminal when the completion settled first. */
  private async cancel(server: string, jobId: string): Promise<void> {
    const tenant = this.world.tenantOfJob.get(jobId)!;
    const answer = await untilAnswered(() => new Client(server, tenant.apiKey).post(`/v1/jobs/${jobId}/cancel`));
    if (answer.status === 202) this.cancels.push(jobId);
    else if (answer.status !== 409) this.refusals.push(`cancel ${jobId}: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
}

/** Calls until the answer is neither a 5xx, nor a refused connection, nor "key in use"; gives up after a minute. */
async function untilAnswered(call: () => Promise<Answer>): Promise<Answer> {
  const deadline = Date.now() + 60_000;
  for (let tries = 1; ; tries++) {
    const answer = await call().catch((error: Error) => ({ status: 0, body: error.message, headers: new Headers() }) as Answer);
    const retry =
      answer.status === 0 || answer.status >= 500 || (answer.status === 409 && answer.body?.error?.code === 'idempotency_key_in_use');
    if (!retry || Date.now() > deadline) return answer;
    await sleep(backoff(tries, CLIENT_RETRY));
  }
}
