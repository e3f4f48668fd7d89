import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { backoff, sleep, type BackoffPolicy } from '../../src/backoff.js';
import { TRANSACTION_RETRY_BACKOFF } from '../../src/db/transaction.js';

/**
 * The formulas each retry in Tally used before there was one backoff, copied as they were
 * written, with the parameters each caller passed. The one backoff must give every caller
 * exactly the delay it had.
 */
const fullJitterAboveMin = (minMs: number, maxMs: number) => (attempt: number, r: number) =>
  minMs + r * (Math.min(maxMs, minMs * 2 ** attempt) - minMs);
const halfToCeiling = (baseMs: number, capMs: number) => (attempt: number, r: number) => {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + r * (ceiling / 2));
};

const callers: [string, BackoffPolicy, (attempt: number, r: number) => number, boolean][] = [
  ['db/transaction.ts (serialization failures, deadlocks)', TRANSACTION_RETRY_BACKOFF, fullJitterAboveMin(5, 200), false],
  ['ledger/settle.ts (unknown outcome)', { floorMs: 20, firstMs: 40, capMs: 500 }, fullJitterAboveMin(20, 500), false],
  ['cli/worker-runtime.ts (database lost)', { floorMs: 500, firstMs: 1_000, capMs: 10_000 }, fullJitterAboveMin(500, 10_000), true],
  ['worker/retry-policy.ts (settle attempts)', { floorMs: 'half', firstMs: 500, capMs: 30_000 }, halfToCeiling(500, 30_000), true],
  ['worker/usage-fetch.ts (usage fetches)', { floorMs: 'half', firstMs: 1_000, capMs: 30_000 }, halfToCeiling(1_000, 30_000), true],
];

describe('backoff', () => {
  it.each(callers)('gives %s exactly its former delays', (_caller, policy, former, rounded) => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempt, r) => {
        const delay = backoff(attempt, policy, () => r);
        // The callers that rounded their delay (to store or log it) keep rounding it.
        const round = (ms: number) => (rounded ? Math.round(ms) : ms);
        expect(round(delay)).toBe(round(former(attempt, r)));
      }),
    );
  });

  it('doubles the ceiling from the first retry up to the cap, never below the floor', () => {
    const policy: BackoffPolicy = { floorMs: 'half', firstMs: 1_000, capMs: 30_000 };
    expect([1, 2, 3, 4, 5, 6, 7].map((attempt) => backoff(attempt, policy, () => 1))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000,
    ]);
    expect(backoff(1, policy, () => 0)).toBe(500);
    expect(backoff(3, { floorMs: 5, firstMs: 10, capMs: 200 }, () => 0)).toBe(5);
  });

  it('jitters with Math.random unless told otherwise', () => {
    const delays = new Set(Array.from({ length: 20 }, () => backoff(5, { floorMs: 0, firstMs: 1_000, capMs: 60_000 })));
    expect(delays.size).toBeGreaterThan(1);
    for (const delay of delays) expect(delay).toBeGreaterThanOrEqual(0);
    for (const delay of delays) expect(delay).toBeLessThanOrEqual(16_000);
  });
});

describe('sleep', () => {
  it('resolves once the time has passed, not before', async () => {
    const started = performance.now();
    await sleep(30);
    // Node may fire a timer up to a millisecond early (it rounds the deadline).
    expect(performance.now() - started).toBeGreaterThanOrEqual(29);
  });
});
