import { integerSetting } from '../settings.js';

/**
 * The operator's knobs for outbound webhooks, read when a delivery worker starts (and by
 * the API at registration for the destination lists). A typo stops the process with a
 * sentence naming the variable.
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

export function outboundSettings(): OutboundSettings {
  const timeoutMs = integerSetting('TALLY_OUTBOUND_TIMEOUT_MS', 10_000);
  // The lease covers a whole delivery (the timeout) and recording its outcome.
  const leaseSeconds = integerSetting('TALLY_OUTBOUND_LEASE_SECONDS', Math.max(60, Math.ceil((2 * timeoutMs) / 1000)));
  if (leaseSeconds * 1000 <= timeoutMs) {
    throw new Error(
      `TALLY_OUTBOUND_LEASE_SECONDS (${leaseSeconds}) must be longer than TALLY_OUTBOUND_TIMEOUT_MS (${timeoutMs} ms): a claim must outlast its delivery`,
    );
  }
  return {
    timeoutMs,
    backoffFirstMs: integerSetting('TALLY_OUTBOUND_BACKOFF_MS', 5_000),
    backoffCapMs: integerSetting('TALLY_OUTBOUND_BACKOFF_CAP_MS', 6 * HOUR_MS),
    retryForMs: hoursSetting('TALLY_OUTBOUND_RETRY_HOURS', 72),
    disableAfterMs: hoursSetting('TALLY_OUTBOUND_DISABLE_AFTER_HOURS', 72),
    concurrency: integerSetting('TALLY_OUTBOUND_CONCURRENCY', 8),
    leaseSeconds,
    pollIntervalMs: integerSetting('TALLY_POLL_INTERVAL_MS', 1000),
  };
}

/** Hours, fractions allowed (tests give a few seconds as 0.001), in milliseconds. */
function hoursSetting(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback * HOUR_MS;
  const hours = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !(hours > 0))
    throw new Error(`${name} must be a positive number of hours, e.g. 72 or 0.5; got ${JSON.stringify(value)}`);
  return hours * HOUR_MS;
}
