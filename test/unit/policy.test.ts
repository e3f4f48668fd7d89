import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { DEFAULT_POLICY, InvalidPolicyError, parsePolicy, policyToJson } from '../../src/lifecycle/index.js';

describe('parsePolicy', () => {
  it('defaults to release, 300 s grace, 86400 s hold', () => {
    expect(DEFAULT_POLICY).toEqual({ failedWithUsage: 'release', cancelGraceSeconds: 300, holdTtlSeconds: 86_400 });
    expect(parsePolicy(undefined)).toEqual(DEFAULT_POLICY);
    expect(parsePolicy(null)).toEqual(DEFAULT_POLICY);
    expect(parsePolicy({})).toEqual(DEFAULT_POLICY);
  });

  it('merges the given snake_case keys over the defaults', () => {
    expect(parsePolicy({ failed_with_usage: 'capture' })).toEqual({ ...DEFAULT_POLICY, failedWithUsage: 'capture' });
    expect(parsePolicy({ cancel_grace_seconds: 5, hold_ttl_seconds: 60 })).toEqual({
      failedWithUsage: 'release',
      cancelGraceSeconds: 5,
      holdTtlSeconds: 60,
    });
  });

  it.each<[string, unknown]>([
    ['a string', 'release'],
    ['an array', [{ failed_with_usage: 'release' }]],
    ['a number', 5],
    ['an unknown failed_with_usage', { failed_with_usage: 'refund' }],
    ['a null failed_with_usage', { failed_with_usage: null }],
    ['zero grace', { cancel_grace_seconds: 0 }],
    ['negative grace', { cancel_grace_seconds: -1 }],
    ['fractional seconds', { hold_ttl_seconds: 1.5 }],
    ['seconds as a string', { hold_ttl_seconds: '300' }],
    ['null seconds', { hold_ttl_seconds: null }],
    ['unsafe seconds', { hold_ttl_seconds: 2 ** 53 }],
    ['an unknown key', { retry_limit: 3 }],
    ['a camelCase key', { failedWithUsage: 'capture' }],
  ])('refuses %s', (_label, input) => {
    expect(() => parsePolicy(input)).toThrow(InvalidPolicyError);
    expect(() => parsePolicy(input)).toThrow(expect.objectContaining({ code: 'invalid_policy' }));
  });
});

describe('policyToJson', () => {
  it('writes the CONTRACT spelling', () => {
    expect(policyToJson(DEFAULT_POLICY)).toEqual({
      failed_with_usage: 'release',
      cancel_grace_seconds: 300,
      hold_ttl_seconds: 86_400,
    });
  });

  it('round-trips through parsePolicy', () => {
    const policy = fc.record({
      failedWithUsage: fc.constantFrom('release' as const, 'capture' as const),
      cancelGraceSeconds: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
      holdTtlSeconds: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    });
    fc.assert(
      fc.property(policy, (p) => {
        expect(parsePolicy(JSON.parse(JSON.stringify(policyToJson(p))))).toEqual(p);
      }),
    );
  });
});
