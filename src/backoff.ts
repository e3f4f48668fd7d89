/**
 * The one retry delay of Tally: exponential backoff with jitter. Retry n (from 1) has the
 * ceiling min(capMs, firstMs · 2^(n−1)) and waits uniformly between its floor and that
 * ceiling. Jitter keeps the retries of many failed calls from arriving together.
 *
 * The floor is either a fixed number of milliseconds (full jitter above a minimum: short
 * database retries, where being a few ms apart is enough) or `'half'` the ceiling ("equal
 * jitter": an event retried in the background never comes back much sooner than its
 * ceiling says).
 *
 * A top-level module, not db/: the worker and the CLI retry things that are no
 * transaction, and should not import the transaction helper to do it.
 */
export interface BackoffPolicy {
  /** the first retry's ceiling; it doubles with each retry */
  readonly firstMs: number;
  /** no ceiling exceeds this */
  readonly capMs: number;
  /** the shortest delay: fixed, or half of the retry's ceiling */
  readonly floorMs: number | 'half';
}

/** Milliseconds to wait before retry `attempt` (1 for the first). Not rounded. */
export function backoff(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.capMs, policy.firstMs * 2 ** Math.max(0, attempt - 1));
  const floor = policy.floorMs === 'half' ? ceiling / 2 : policy.floorMs;
  return floor + random() * (ceiling - floor);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
