import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  CHARGE_TYPES,
  InvalidSettlementKeyError,
  creditKey,
  extensionKey,
  formatLedgerKey,
  holdKey,
  parseLedgerKey,
  parseSettlementKey,
  settlementKey,
  type LedgerKey,
} from '../../src/lifecycle/index.js';

const T = '018f0000-0000-7000-8000-000000000001';
const J = '018f0000-0000-7000-8000-000000000002';

/** What a credit's key may hold: printable ASCII without spaces, colons included. */
const printable = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1 });

const ledgerKeys: fc.Arbitrary<LedgerKey> = fc.oneof(
  fc
    .tuple(fc.uuid(), fc.uuid(), fc.constantFrom(...CHARGE_TYPES), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }))
    .map(([tenantId, jobId, chargeType, version]) => ({
      kind: 'settlement' as const,
      tenantId,
      jobId,
      chargeType,
      version: chargeType === 'adjustment' ? version : 1,
    })),
  fc.tuple(fc.uuid(), fc.uuid()).map(([tenantId, jobId]) => ({ kind: 'hold' as const, tenantId, jobId })),
  fc
    .tuple(fc.uuid(), fc.uuid(), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }))
    .map(([tenantId, jobId, version]) => ({ kind: 'extension' as const, tenantId, jobId, version })),
  fc
    .tuple(fc.uuid(), fc.oneof(printable, fc.uuid(), fc.stringMatching(/^[0-9a-f]{32}$/)))
    .map(([tenantId, idempotencyKey]) => ({ kind: 'credit' as const, tenantId, idempotencyKey })),
);

/** Strings near the grammar: its shapes filled with its words, ids, numbers and junk. */
const idLike = fc.oneof(fc.constant(T), fc.constant(J), fc.uuid(), fc.constantFrom('', 'credit', ' ', 'a b', 'A'));
const wordLike = fc.constantFrom('credit', 'reserve', 'extension', 'capture', 'release', 'adjustment', 'Credit', 'RESERVE', 'Extension', 'refund', '');
const numberLike = fc.oneof(fc.constantFrom('1', '2', '0', '01', '1.0', '-1', '', ' 1', '9007199254740993'), fc.nat().map(String));
const junk = fc.oneof(printable, fc.string(), fc.constantFrom('', ' ', 'x y', '\t'));
const keyLikeStrings = fc.oneof(
  // Well-formed keys of every kind, so each kind is parsed often (the near misses below
  // hit a hold's exact shape only about once in 2000 strings).
  ledgerKeys.map(formatLedgerKey),
  fc.tuple(idLike, idLike, wordLike, numberLike).map((parts) => parts.join(':')),
  fc.tuple(idLike, wordLike, junk).map((parts) => parts.join(':')),
  fc.array(fc.oneof(idLike, wordLike, numberLike, junk), { maxLength: 6 }).map((parts) => parts.join(':')),
);

describe('the key grammar: one formatter and one parser for every ledger key', () => {
  it('formats a hold as {tenant}:{job}:reserve:1 and a credit as {tenant}:credit:{key}, as stored today', () => {
    expect(holdKey(T, J)).toBe(`${T}:${J}:reserve:1`);
    expect(extensionKey(T, J, 3)).toBe(`${T}:${J}:extension:3`);
    expect(() => extensionKey(T, J, 0)).toThrow(InvalidSettlementKeyError);
    expect(creditKey(T, '0123456789abcdef0123456789abcdef')).toBe(`${T}:credit:0123456789abcdef0123456789abcdef`);
    expect(creditKey(T, `${J}:0:3`)).toBe(`${T}:credit:${J}:0:3`);
  });

  it('derives a credit key byte for byte as {tenant}:credit:{idempotency key}', () => {
    fc.assert(
      fc.property(fc.uuid(), printable, (tenantId, key) => {
        expect(creditKey(tenantId, key)).toBe(`${tenantId}:credit:${key}`);
      }),
    );
  });

  it('parses every key it formats back into the same parts', () => {
    fc.assert(
      fc.property(ledgerKeys, (parts) => {
        expect(parseLedgerKey(formatLedgerKey(parts))).toEqual(parts);
      }),
    );
  });

  it('formats every key it parses back into the same string', () => {
    const parsed = { settlement: 0, hold: 0, extension: 0, credit: 0 };
    fc.assert(
      fc.property(keyLikeStrings, (key) => {
        let parts: LedgerKey;
        try {
          parts = parseLedgerKey(key);
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidSettlementKeyError);
          return;
        }
        parsed[parts.kind]++;
        expect(formatLedgerKey(parts)).toBe(key);
      }),
      { numRuns: 2000 },
    );
    // The property says something only if some strings of every kind were keys.
    expect(Math.min(parsed.settlement, parsed.hold, parsed.extension, parsed.credit)).toBeGreaterThan(0);
  });

  it('reads a key whose job position says "credit" as a credit: no job is called that', () => {
    expect(parseLedgerKey(`${T}:credit:capture:1`)).toEqual({ kind: 'credit', tenantId: T, idempotencyKey: 'capture:1' });
    expect(parseLedgerKey(`${T}:credit:reserve:1`)).toEqual({ kind: 'credit', tenantId: T, idempotencyKey: 'reserve:1' });
    expect(() => settlementKey(T, 'credit', 'capture', 1)).toThrow(InvalidSettlementKeyError);
    expect(() => holdKey(T, 'credit')).toThrow(InvalidSettlementKeyError);
  });

  it.each([
    `${T}:${J}:reserve`,
    `${T}:${J}:reserve:2`,
    `${T}:${J}:reserve:01`,
    `${T}:${J}:reserve:1:x`,
    `${T}:${J}:Reserve:1`,
    `:${J}:reserve:1`,
    `${T}::reserve:1`,
    `${T}:credit`,
    `${T}:credit:`,
    `${T}:Credit:abc`,
    `:credit:abc`,
    `${T}:credit:a b`,
    `${T}:credit:tab\there`,
    `${T}:credit:é`,
    `${T}:${J}:Capture:1`,
    `${T}:${J}:capture:01`,
    `${T}:${J}`,
    '',
  ])('refuses the non-canonical spelling %j', (key) => {
    expect(() => parseLedgerKey(key)).toThrow(InvalidSettlementKeyError);
  });

  it.each([
    ['an empty tenant id', () => holdKey('', J)],
    ['a tenant id with ":"', () => creditKey('a:b', 'k')],
    ['an empty job id', () => holdKey(T, '')],
    ['an empty credit key', () => creditKey(T, '')],
    ['a credit key with a space', () => creditKey(T, 'a b')],
  ])('refuses to format a key from %s', (_label, format) => {
    expect(format).toThrow(InvalidSettlementKeyError);
  });

  it('parseSettlementKey stays the parser of charge keys: a hold or credit key is refused there', () => {
    expect(parseSettlementKey(`${T}:${J}:adjustment:3`)).toEqual({ tenantId: T, jobId: J, chargeType: 'adjustment', version: 3 });
    expect(() => parseSettlementKey(holdKey(T, J))).toThrow(InvalidSettlementKeyError);
    expect(() => parseSettlementKey(creditKey(T, 'abc'))).toThrow(InvalidSettlementKeyError);
  });
});
