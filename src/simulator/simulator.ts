import type { Usage } from '../pricing/index.js';
import { DEFAULT_CHAOS, deliveriesOf, type ChaosOptions, type Delivery, type SimulatedJob } from './deliveries.js';
import { Random } from './random.js';
import { SCENARIO_KINDS, buildScenario, type Scenario, type ScenarioKind } from './scenarios.js';
import { Limiter, send, type DeliveryResult } from './sender.js';

export interface SimulationOptions {
  baseUrl: string;
  provider: string;
  secret: string;
  seed: number;
  concurrency: number;
  chaos?: Partial<ChaosOptions>;
  kinds?: readonly ScenarioKind[];
  /** the tenant's cancel, for scenarios where it races the provider */
  cancelJob?: (jobId: string) => Promise<void>;
  /** called once with the number of deliveries the run will send */
  onStart?: (deliveries: number) => void;
  onDelivery?: (result: DeliveryResult) => void;
}

export interface PlannedJob extends SimulatedJob {
  scenario: Scenario;
}

export interface SimulationReport {
  jobs: PlannedJob[];
  results: DeliveryResult[];
  deliveries: number;
  accepted: number;
  duplicatesAbsorbed: number;
  forgeriesRefused: number;
  /** answers other than the expected ones (must be empty) */
  unexpected: DeliveryResult[];
}

/** Picks a scenario for each job, reproducibly from the seed. */
export function planJobs(jobs: SimulatedJob[], limits: Usage, seed: number, kinds: readonly ScenarioKind[] = SCENARIO_KINDS): PlannedJob[] {
  const random = new Random(seed);
  return jobs.map((job, index) => ({ ...job, scenario: buildScenario(kinds[index % kinds.length]!, random, limits) }));
}

/**
 * A fake inference provider that misbehaves on purpose: duplicates under the same id,
 * re-emissions under new ids, forged signatures, random delays that reorder a phase,
 * late failures after success, out-of-order corrections, and tenant cancels racing
 * completions. All jobs run at once; within a job, phase n+1 starts only when every
 * genuine delivery of phase n was answered.
 */
export async function simulate(planned: PlannedJob[], options: SimulationOptions): Promise<SimulationReport> {
  const random = new Random(options.seed ^ 0x5eed);
  const chaos = { ...DEFAULT_CHAOS, ...options.chaos };
  const limiter = new Limiter(options.concurrency);
  const results: DeliveryResult[] = [];
  const sendOne = (delivery: Delivery) =>
    limiter.run(() => send(options.baseUrl, options.provider, delivery)).then((result) => {
      results.push(result);
      options.onDelivery?.(result);
      return result;
    });

  // Everything is drawn from the seed before anything is sent: the same seed sends
  // the same deliveries whatever the timing.
  const plans = planned.map((job) => ({
    job,
    phases: job.scenario.phases.map((phase) => random.shuffle(phase.flatMap((event) => deliveriesOf(job, event, options.secret, random, chaos)))),
  }));
  options.onStart?.(plans.reduce((n, plan) => n + plan.phases.reduce((m, phase) => m + phase.length, 0), 0));
  await Promise.all(
    plans.map(async ({ job, phases }) => {
      for (const [index, deliveries] of phases.entries()) {
        const cancel = index === 0 && job.scenario.apiCancel && options.cancelJob ? [options.cancelJob(job.id)] : [];
        await Promise.all([...deliveries.map(sendOne), ...cancel]);
      }
    }),
  );

  const genuine = results.filter((r) => !r.delivery.forged);
  const unexpected = results.filter((r) => (r.delivery.forged ? r.status !== 401 : r.status !== 200));
  return {
    jobs: planned,
    results,
    deliveries: results.length,
    accepted: genuine.filter((r) => r.answer === 'accepted').length,
    duplicatesAbsorbed: genuine.filter((r) => r.answer === 'already_accepted').length,
    forgeriesRefused: results.filter((r) => r.delivery.forged && r.status === 401).length,
    unexpected,
  };
}

