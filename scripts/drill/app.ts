import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The drill drives Tally from outside — child processes, HTTP, SQL — like an operator,
 * and compiles apart from the app (as bench/ does). Two things come from the app's own
 * build (dist/), loaded at run time: the provider simulator, which signs webhooks the
 * Standard Webhooks way and sends duplicates, re-emissions and forgeries, and the one
 * retry backoff. The interfaces below are the parts of src/simulator/ and src/backoff.ts
 * the drill relies on.
 */

/** The package root, from dist/drill/scripts/drill/ (compiled) — where bin/ and dist/ are. */
export const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
export const TALLY_BIN = join(ROOT, 'bin', 'tally');

export type Usage = Record<string, number>;

export interface ProviderEvent {
  type: string;
  usage?: Usage;
  correction?: number;
}

export interface Scenario {
  kind: string;
  phases: ProviderEvent[][];
  /** the usage that must be billed; null when the hold must be released */
  billedUsage: Usage | null;
  apiCancel: boolean;
}

export interface SimulatedJob {
  id: string;
  tenantId: string;
  model: string;
  currency: string;
}

export interface PlannedJob extends SimulatedJob {
  scenario: Scenario;
}

export interface Delivery {
  jobId: string;
  eventId: string;
  /** signed with a secret the provider does not have: must be refused with 401 */
  forged: boolean;
}

export interface DeliveryResult {
  delivery: Delivery;
  status: number;
  answer: string | null;
  tries: number;
}

export interface SimulationOptions {
  baseUrl: string;
  provider: string;
  secret: string;
  seed: number;
  concurrency: number;
  cancelJob?: (jobId: string) => Promise<void>;
  onDelivery?: (result: DeliveryResult) => void;
}

export interface Simulator {
  SCENARIO_KINDS: readonly string[];
  planJobs(jobs: SimulatedJob[], limits: Usage, seed: number, kinds?: readonly string[]): PlannedJob[];
  /** every delivery of every phase sent and answered; 5xx and refused connections retried like a provider */
  simulate(planned: PlannedJob[], options: SimulationOptions): Promise<{ unexpected: DeliveryResult[] }>;
}

export interface BackoffPolicy {
  readonly firstMs: number;
  readonly capMs: number;
  readonly floorMs: number | 'half';
}

export interface Backoff {
  backoff(attempt: number, policy: BackoffPolicy): number;
  sleep(ms: number): Promise<void>;
}

const fromBuild = (path: string) => import(pathToFileURL(join(ROOT, 'dist', path)).href);

export async function loadSimulator(): Promise<Simulator> {
  return (await fromBuild('simulator/index.js')) as Simulator;
}

export async function loadBackoff(): Promise<Backoff> {
  return (await fromBuild('backoff.js')) as Backoff;
}
