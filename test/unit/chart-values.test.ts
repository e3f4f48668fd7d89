import { describe, expect, it } from 'vitest';
import { chartMicros, chartSeconds } from '../../src/console/chart-values.js';

describe('chart values', () => {
  it("keeps an instant's microseconds, so a burst of entries within one second is drawn in its order", () => {
    const burst = ['2026-12-05T17:34:05.000001Z', '2026-12-05T17:34:05.000950Z', '2026-12-05T17:34:05.412000Z', '2026-12-05T17:34:06.000000Z'];
    const xs = burst.map(chartSeconds);
    expect(xs[0]).toBeCloseTo(Date.UTC(2026, 11, 5, 17, 34, 5) / 1000 + 0.000001, 6);
    for (let i = 1; i < xs.length; i++) expect(xs[i]!).toBeGreaterThan(xs[i - 1]!);
    expect(chartSeconds('2026-12-05T17:34:05Z')).toBe(Date.UTC(2026, 11, 5, 17, 34, 5) / 1000);
  });

  it('hands amounts over as exact integer micro-units, and refuses what a number cannot hold', () => {
    expect(chartMicros('249.941900')).toBe(249_941_900);
    expect(chartMicros('-0.000001')).toBe(-1);
    expect(() => chartMicros('9007199254.740992')).toThrow(RangeError);
  });
});
