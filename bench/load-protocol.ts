/** Messages between the harness and its load-generator child process (IPC). */

export interface LoadPlan {
  baseUrl: string;
  provider: string;
  secret: string;
  /** JSON file of LoadJob[] */
  jobsFile: string;
  /** requests in flight */
  concurrency: number;
  /** deliveries per second; 0 = as fast as the server answers */
  rate: number;
  seed: number;
  model: string;
  currency: string;
}

export interface LoadJob {
  id: string;
  tenantId: string;
  usage: Record<string, number>;
  /** job.progress reports (cumulative usage), each sent once, in order, before the completion */
  progress?: Record<string, number>[];
}

export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export interface LoadReport {
  deliveries: number;
  /** final HTTP status → count (0 = no answer after every retry) */
  statuses: Record<string, number>;
  /** `status` of 200 answers (accepted / already_accepted) or the error code */
  answers: Record<string, number>;
  /** sends repeated after a 5xx, 429 or connection error, as a provider would */
  retries: number;
  /** epoch ms: the first request sent, the last answer received */
  firstSendAt: number;
  lastAnswerAt: number;
  /** per delivery, request → answer (ms), including retries */
  httpMs: Percentiles;
  cpuSeconds: number;
  peakRssBytes: number;
  /** a few deliveries that got neither 200 nor a retry (must be empty) */
  unexpected: string[];
}

export type LoadMessage =
  | { type: 'progress'; done: number; ok: number }
  | { type: 'done'; report: LoadReport }
  | { type: 'failed'; message: string };

export function percentiles(values: number[]): Percentiles {
  if (values.length === 0) return { p50: 0, p95: 0, p99: 0, max: 0 };
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: sorted[sorted.length - 1]! };
}
