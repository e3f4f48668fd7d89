import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crossThresholds } from '../../src/funds/thresholds.js';

/**
 * A movement's entries walked past a wallet's thresholds (src/funds/thresholds.ts): after
 * it, each threshold is armed exactly when the last entry left available at or above it;
 * a crossing is an entry that took available below an armed threshold, announced once
 * until an entry lifts available back to it.
 */

const amount = fc.bigInt({ min: -1_000n, max: 1_000n });
const thresholds = fc.uniqueArray(fc.record({ id: fc.uuid(), amount, armed: fc.boolean() }), { selector: (t) => t.id, maxLength: 10 });

describe('crossThresholds', () => {
  it('leaves each threshold armed exactly when the last available is at or above it, and crosses only downward, once per arming', () => {
    fc.assert(
      fc.property(thresholds, fc.array(amount, { minLength: 1, maxLength: 20 }), (list, availableAfter) => {
        const { crossings, armed } = crossThresholds(list, availableAfter);
        for (const t of list) {
          const armedAfter = armed.get(t.id) ?? t.armed;
          expect(armedAfter).toBe(availableAfter.at(-1)! >= t.amount);
          expect(armed.has(t.id)).toBe(armedAfter !== t.armed);
          // replay by hand: a crossing where armed and below, re-armed where at or above
          let now = t.armed;
          const expected: number[] = [];
          for (const [i, a] of availableAfter.entries()) {
            if (now && a < t.amount) [now, expected[expected.length]] = [false, i + 1];
            else if (a >= t.amount) now = true;
          }
          const own = crossings.filter((c) => c.thresholdId === t.id);
          expect(own.map((c) => c.position)).toEqual(expected);
          for (const c of own) expect(c.available).toBe(availableAfter[c.position - 1]);
        }
      }),
    );
  });

  it('a movement that ends where it started but dipped below crosses once', () => {
    const { crossings, armed } = crossThresholds([{ id: 't', amount: 100n, armed: true }], [50n, 150n]);
    expect(crossings).toEqual([{ thresholdId: 't', threshold: 100n, available: 50n, position: 1 }]);
    expect(armed.size).toBe(0);
  });
});
