import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  CHARGE_TYPES,
  InvalidSettlementKeyError,
  parseSettlementKey,
  settlementKey,
  type ChargeType,
} from '../../src/lifecycle/index.js';

const T = '018f0000-0000-7000-8000-000000000001';
const J = '018f0000-0000-7000-8000-000000000002';

describe('settlementKey', () => {
  it('composes {tenant}:{job}:{charge_type}:{version}', () => {
    expect(settlementKey(T, J, 'capture', 1)).toBe(`${T}:${J}:capture:1`);
    expect(settlementKey(T, J, 'release', 1)).toBe(`${T}:${J}:release:1`);
    expect(settlementKey(T, J, 'adjustment', 7)).toBe(`${T}:${J}:adjustment:7`);
  });

  it.each<[string, string, string, ChargeType, number]>([
    ['a capture with version 2 (one hold, resolved once)', T, J, 'capture', 2],
    ['a release with version 2', T, J, 'release', 2],
    ['version 0', T, J, 'adjustment', 0],
    ['a fractional version', T, J, 'adjustment', 1.5],
    ['a tenant id with ":"', 'a:b', J, 'capture', 1],
    ['an empty job id', T, '', 'capture', 1],
    ['an unknown charge type', T, J, 'refund' as ChargeType, 1],
  ])('refuses %s', (_label, tenant, job, chargeType, version) => {
    expect(() => settlementKey(tenant, job, chargeType, version)).toThrow(InvalidSettlementKeyError);
  });
});

describe('parseSettlementKey', () => {
  it('is the inverse of settlementKey', () => {
    const parts = fc
      .tuple(fc.uuid(), fc.uuid(), fc.constantFrom(...CHARGE_TYPES), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }))
      .map(([tenantId, jobId, chargeType, version]) => ({
        tenantId,
        jobId,
        chargeType,
        version: chargeType === 'adjustment' ? version : 1,
      }));
    fc.assert(
      fc.property(parts, (p) => {
        const key = settlementKey(p.tenantId, p.jobId, p.chargeType, p.version);
        expect(parseSettlementKey(key)).toEqual(p);
      }),
    );
  });

  it.each([
    `${T}:${J}:capture`,
    `${T}:${J}:capture:1:x`,
    `${T}:${J}:capture:2`,
    `${T}:${J}:adjustment:0`,
    `${T}:${J}:adjustment:01`,
    `${T}:${J}:adjustment:1.0`,
    `${T}:${J}:adjustment:-1`,
    `${T}:${J}:adjustment:9007199254740993`,
    `${T}:${J}:refund:1`,
    `:${J}:capture:1`,
    `${T}::capture:1`,
    '',
  ])('refuses %j', (key) => {
    expect(() => parseSettlementKey(key)).toThrow(InvalidSettlementKeyError);
  });
});
