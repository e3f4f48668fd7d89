import type { Usage } from '../pricing/index.js';
import type { Random } from './random.js';

/**
 * What happens to one job at the provider. Each kind has one correct outcome
 * whatever the delivery order, because later phases are sent only after the
 * earlier ones were accepted (intake numbers a job's events in acceptance order).
 */
export type ScenarioKind =
  | 'completed' // started, progress, completed
  | 'completed_then_late_failure' // completed; later a failure that must change nothing
  | 'corrected' // completed; later corrections 1 and 2, shuffled: billed as correction 2
  | 'correction_only' // a correction before any completion is the completion
  | 'failed' // failed without usage: released
  | 'provider_canceled' // canceled by the provider with usage so far: captured
  | 'cancel_races_completion' // the tenant cancels while the completion arrives: one of capture or release
  | 'long_running'; // progress reports with usage so far (some past the hold: exhausted), shuffled, then the completion

export const SCENARIO_KINDS: readonly ScenarioKind[] = [
  'completed',
  'completed_then_late_failure',
  'corrected',
  'correction_only',
  'failed',
  'provider_canceled',
  'cancel_races_completion',
  'long_running',
];

export interface ProviderEvent {
  type: 'job.started' | 'job.progress' | 'job.completed' | 'job.failed' | 'job.canceled' | 'job.usage_corrected';
  usage?: Usage;
  correction?: number;
}

export interface Scenario {
  kind: ScenarioKind;
  /** events sent in phases: every delivery of phase n is accepted before phase n+1 starts */
  phases: ProviderEvent[][];
  /** the usage that must be billed; null when the hold must be released */
  billedUsage: Usage | null;
  /** the tenant cancels through the API during the first phase */
  apiCancel: boolean;
}

export function randomUsage(random: Random, limits: Usage): Usage {
  return Object.fromEntries(Object.entries(limits).map(([dimension, max]) => [dimension, random.int(0, max)]));
}

export function buildScenario(kind: ScenarioKind, random: Random, limits: Usage): Scenario {
  const usage = randomUsage(random, limits);
  const started: ProviderEvent = { type: 'job.started' };
  const progress: ProviderEvent = { type: 'job.progress' };
  switch (kind) {
    case 'completed':
      return { kind, phases: [[started, progress, { type: 'job.completed', usage }]], billedUsage: usage, apiCancel: false };
    case 'completed_then_late_failure':
      return {
        kind,
        phases: [[started, { type: 'job.completed', usage }], [{ type: 'job.failed' }]],
        billedUsage: usage,
        apiCancel: false,
      };
    case 'corrected': {
      const first = randomUsage(random, limits);
      const second = randomUsage(random, limits);
      return {
        kind,
        phases: [
          [started, { type: 'job.completed', usage }],
          random.shuffle([
            { type: 'job.usage_corrected', usage: first, correction: 1 },
            { type: 'job.usage_corrected', usage: second, correction: 2 },
          ] as ProviderEvent[]),
        ],
        billedUsage: second,
        apiCancel: false,
      };
    }
    case 'correction_only':
      return { kind, phases: [[progress, { type: 'job.usage_corrected', usage, correction: 1 }]], billedUsage: usage, apiCancel: false };
    case 'failed':
      return { kind, phases: [[started, { type: 'job.failed' }]], billedUsage: null, apiCancel: false };
    case 'provider_canceled':
      return { kind, phases: [[started, { type: 'job.canceled', usage }]], billedUsage: usage, apiCancel: false };
    case 'cancel_races_completion':
      return { kind, phases: [[{ type: 'job.completed', usage }]], billedUsage: usage, apiCancel: true };
    case 'long_running': {
      // Cumulative reports, up to half again the limits (a job of these limits has no
      // auto_extend: the hold runs out, job.hold_exhausted); never charged, in any order.
      const reports = [0, 1, 2].map(() =>
        Object.fromEntries(Object.entries(limits).map(([dimension, max]) => [dimension, random.int(0, Math.floor(max * 1.5))])),
      );
      const reported: ProviderEvent[] = reports.map((report) => ({ type: 'job.progress', usage: report }));
      return { kind, phases: [[started, ...reported], [{ type: 'job.completed', usage }]], billedUsage: usage, apiCancel: false };
    }
  }
}
