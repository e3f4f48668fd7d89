import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkExtension, extensionTarget, usageSoFar, type AutoExtend, type ExtensionPhase } from '../../src/lifecycle/extension.js';

/**
 * The automatic extension's arithmetic (docs/CONTRACT.md, "Long-running jobs"), as
 * properties over random limits, steps, caps, usage and phases.
 */

const DIMS = ['gpu_seconds', 'input_tokens', 'frames'] as const;
const units = (max: number) => fc.integer({ min: 0, max });

const job = fc
  .record({
    dims: fc.subarray([...DIMS], { minLength: 1 }),
    limits: fc.record({ gpu_seconds: units(5_000), input_tokens: units(5_000), frames: units(5_000) }),
    steps: fc.record({
      gpu_seconds: fc.integer({ min: 1, max: 700 }),
      input_tokens: fc.integer({ min: 1, max: 700 }),
      frames: fc.integer({ min: 1, max: 700 }),
    }),
    headroom: fc.record({ gpu_seconds: units(10_000), input_tokens: units(10_000), frames: units(10_000) }),
    soFar: fc.record({ gpu_seconds: units(20_000), input_tokens: units(20_000), frames: units(20_000) }),
    billed: fc.record({ gpu_seconds: units(20_000), input_tokens: units(20_000), frames: units(20_000) }),
    phase: fc.constantFrom('running', 'cancel_requested', 'capturing'),
  })
  .map(({ dims, limits, steps, headroom, soFar, billed, phase }) => {
    const rule: AutoExtend = {
      step: Object.fromEntries(dims.map((d) => [d, steps[d]])),
      // max_limits is at least the limits (the contract's 422 otherwise)
      maxLimits: Object.fromEntries(dims.map((d) => [d, limits[d] + headroom[d]])),
    };
    const p: ExtensionPhase = phase === 'capturing' ? { kind: 'capturing', usage: billed } : { kind: phase };
    return { limits, rule, soFar, phase: p };
  });

describe('checkExtension', () => {
  it('never lowers a limit, grows only step dimensions, in whole steps, to the smallest reaching the target, capped at max_limits', () => {
    fc.assert(
      fc.property(job, ({ limits, rule, soFar, phase }) => {
        const check = checkExtension(limits, rule, soFar, phase);
        for (const d of DIMS) {
          const [before, after] = [limits[d], check.limits[d]!];
          expect(after).toBeGreaterThanOrEqual(before);
          if (!(d in rule.step)) {
            expect(after).toBe(before);
            continue;
          }
          const [step, cap] = [rule.step[d]!, rule.maxLimits[d]!];
          const target = extensionTarget(phase, soFar, rule.step, d);
          expect(after).toBeLessThanOrEqual(Math.max(before, cap));
          if (after >= target && after > before) {
            expect((after - before) % step === 0 || after === cap).toBe(true);
            expect(after - step).toBeLessThan(target); // the smallest whole step that reaches it
          }
          expect(check.short.includes(d)).toBe(after < target);
          if (after < target) expect(after).toBe(Math.max(before, cap));
        }
        expect(check.grew).toBe(DIMS.some((d) => check.limits[d] !== limits[d]));
      }),
      { numRuns: 2000 },
    );
  });

  it('asked again with the same usage, grows nothing more (a duplicate report extends once)', () => {
    fc.assert(
      fc.property(job, ({ limits, rule, soFar, phase }) => {
        const once = checkExtension(limits, rule, soFar, phase);
        const twice = checkExtension(once.limits, rule, soFar, phase);
        expect(twice.limits).toEqual(once.limits);
        expect(twice.grew).toBe(false);
        expect(twice.short).toEqual(once.short);
      }),
    );
  });

  it('keeps one step of headroom while running: 130 GPU-seconds so far with steps of 60 from 120 → 240', () => {
    const rule = { step: { gpu_seconds: 60 }, maxLimits: { gpu_seconds: 600 } };
    expect(checkExtension({ gpu_seconds: 120 }, rule, { gpu_seconds: 130 }, { kind: 'running' })).toEqual({
      limits: { gpu_seconds: 240 },
      grew: true,
      short: [],
    });
    expect(checkExtension({ gpu_seconds: 120 }, rule, { gpu_seconds: 130 }, { kind: 'cancel_requested' }).limits).toEqual({
      gpu_seconds: 180,
    });
    expect(checkExtension({ gpu_seconds: 540 }, rule, { gpu_seconds: 590 }, { kind: 'running' })).toEqual({
      limits: { gpu_seconds: 600 },
      grew: true,
      short: ['gpu_seconds'],
    });
  });

  it('stays exact near Number.MAX_SAFE_INTEGER: a step that would pass it is capped at max_limits', () => {
    const big = Number.MAX_SAFE_INTEGER - 10;
    expect(
      checkExtension({ t: big - 7 }, { step: { t: 3 }, maxLimits: { t: big } }, { t: big - 5 }, { kind: 'cancel_requested' }).limits,
    ).toEqual({ t: big - 4 });
    expect(
      checkExtension({ t: big - 7 }, { step: { t: 2 ** 52 }, maxLimits: { t: big - 7 } }, { t: big - 5 }, { kind: 'cancel_requested' })
        .limits,
    ).toEqual({ t: big - 7 });
    expect(
      checkExtension({ t: 1 }, { step: { t: 2 ** 52 }, maxLimits: { t: big } }, { t: 2 ** 52 + 5 }, { kind: 'cancel_requested' }).limits,
    ).toEqual({ t: big });
  });
});

describe('usageSoFar', () => {
  it("keeps each dimension's largest report, whatever the order the reports arrive in", () => {
    const report = fc.dictionary(fc.constantFrom(...DIMS), units(1_000_000));
    fc.assert(
      fc.property(fc.array(report, { maxLength: 12 }), (reports) => {
        const forward = reports.reduce<ReturnType<typeof usageSoFar> | null>((so, r) => usageSoFar(so, r), null) ?? {};
        const backward = [...reports].reverse().reduce<ReturnType<typeof usageSoFar> | null>((so, r) => usageSoFar(so, r), null) ?? {};
        expect(forward).toEqual(backward);
        for (const d of DIMS) {
          const seen = reports.filter((r) => d in r).map((r) => r[d]!);
          expect(forward[d]).toBe(seen.length ? Math.max(...seen) : undefined);
        }
      }),
    );
  });
});
