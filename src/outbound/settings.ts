import type { Config } from '../config/index.js';

type OutboundConfig = Pick<
  Config,
  | 'outboundTimeoutMs'
  | 'outboundBackoffMs'
  | 'outboundBackoffCapMs'
  | 'outboundRetryHours'
  | 'outboundDisableAfterHours'
  | 'outboundConcurrency'
  | 'outboundLeaseSeconds'
  | 'pollIntervalMs'
>;

/**
 * The operator's knobs for outbound webhooks, handed to a delivery worker when it starts
 * (src/config/ declares and validates the variables named below).
 */
export interface OutboundSettings {
  /** one delivery's whole budget: connect, answer and body (TALLY_OUTBOUND_TIMEOUT_MS) */
  timeoutMs: number;
  /** the first retry's ceiling; it doubles per retry (TALLY_OUTBOUND_BACKOFF_MS) */
  backoffFirstMs: number;
  /** no retry waits longer (TALLY_OUTBOUND_BACKOFF_CAP_MS) */
  backoffCapMs: number;
  /** a delivery still failing after this long is dead (TALLY_OUTBOUND_RETRY_HOURS) */
  retryForMs: number;
  /** an endpoint failing without a success for this long is disabled (TALLY_OUTBOUND_DISABLE_AFTER_HOURS) */
  disableAfterMs: number;
  /** deliveries in flight per process (TALLY_OUTBOUND_CONCURRENCY) */
  concurrency: number;
  /** how long a claim is its worker's: longer than a delivery's timeout (TALLY_OUTBOUND_LEASE_SECONDS) */
  leaseSeconds: number;
  /** an idle loop looks for due deliveries this often (TALLY_POLL_INTERVAL_MS, shared with settlement) */
  pollIntervalMs: number;
}

const HOUR_MS = 3_600_000;

/** The delivery worker's settings from the configuration (src/config/ validates them, the lease against the timeout too). */
export function outboundSettings(config: OutboundConfig): OutboundSettings {
  return {
    timeoutMs: config.outboundTimeoutMs,
    backoffFirstMs: config.outboundBackoffMs,
    backoffCapMs: config.outboundBackoffCapMs,
    retryForMs: config.outboundRetryHours * HOUR_MS,
    disableAfterMs: config.outboundDisableAfterHours * HOUR_MS,
    concurrency: config.outboundConcurrency,
    leaseSeconds: config.outboundLeaseSeconds,
    pollIntervalMs: config.pollIntervalMs,
  };
}
