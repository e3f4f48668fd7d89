import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { InvalidAmountError } from '../../src/money/index.js';
import {
  InvalidUsageError,
  ROUNDING_RULE,
  amountOfSnapshot,
  billable,
  quote,
  snapshotOf,
  validateUsage,
  type PriceBook,
  type PricingSnapshot,
  type Usage,
} from '../../src/pricing/index.js';

/** Prices in micros per 1,000,000 units. */
const BOOK: PriceBook = {
  id: 'pb_1',
  model: 'm1',
  currency: 'USD',
  version: 3,
  unitPrices: {
    input_tokens: 1_000_000n, // 1.000000 per 1M → 1 micro per token
    output_tokens: 2_500_000n, // 2.500000 per 1M → 2.5 micros per token
    half: 500_000n, // 0.500000 per 1M → half a micro per unit: every odd count is a tie
    free: 0n,
  },
};

const book = (unitPrices: Record<string, bigint>): PriceBook => ({ ...BOOK, unitPrices });

describe('quote, hand computed', () => {
  it.each<[string, PriceBook, Usage, bigint]>([
    ['input and output', BOOK, { input_tokens: 1200, output_tokens: 340 }, 1200n + 850n],
    ['a half-micro tie rounds up', BOOK, { half: 1 }, 1n],
    ['1.5 micros rounds up to 2', BOOK, { half: 3 }, 2n],
    ['an exact micro stays', BOOK, { half: 2 }, 1n],
    ['2.5 micros (output tie) rounds up to 3', BOOK, { output_tokens: 1 }, 3n],
    ['just under a tie rounds down', book({ a: 499_999n }), { a: 1 }, 0n],
    ['just over a tie rounds up', book({ a: 500_001n }), { a: 1 }, 1n],
    ['a tiny price on one unit rounds to 0.000000', book({ a: 1n }), { a: 1 }, 0n],
    ['the same tiny price reaches a tie at 500,000 units', book({ a: 1n }), { a: 500_000 }, 1n],
    ['a zero price bills nothing', BOOK, { free: 10 ** 15 }, 0n],
    ['zero units bill nothing', BOOK, { input_tokens: 0, output_tokens: 0 }, 0n],
    ['no usage at all', BOOK, {}, 0n],
    ['each dimension rounds on its own (0.4 + 0.4 → 0, not 1)', book({ a: 400_000n, b: 400_000n }), { a: 1, b: 1 }, 0n],
    ['the largest safe count at 1 micro per unit is exact', BOOK, { input_tokens: Number.MAX_SAFE_INTEGER }, 9_007_199_254_740_991n],
    ['huge count × huge price stays exact', book({ a: 10n ** 18n }), { a: Number.MAX_SAFE_INTEGER }, 9_007_199_254_740_991n * 10n ** 12n],
  ])('%s', (_label, priceBook, usage, micros) => {
    expect(quote(priceBook, usage).amount).toBe(micros);
  });

  it('lists one line per priced dimension, sorted by name', () => {
    const quoted = quote(BOOK, { output_tokens: 340, input_tokens: 1200, half: 1 });
    expect(quoted.lines).toEqual([
      { dimension: 'half', units: 1, unitPrice: 500_000n, amount: 1n },
      { dimension: 'input_tokens', units: 1200, unitPrice: 1_000_000n, amount: 1200n },
      { dimension: 'output_tokens', units: 340, unitPrice: 2_500_000n, amount: 850n },
    ]);
    expect(quoted.amount).toBe(2051n);
  });

  it('records unpriced dimensions without billing them', () => {
    const usage = { input_tokens: 10, gpu_seconds: 99 };
    expect(quote(BOOK, usage)).toEqual({
      amount: 10n,
      lines: [{ dimension: 'input_tokens', units: 10, unitPrice: 1_000_000n, amount: 10n }],
    });
    expect(snapshotOf(BOOK, usage).usage).toEqual({ gpu_seconds: 99, input_tokens: 10 });
  });

  it('never finds a price on the prototype ("constructor", "toString")', () => {
    expect(quote(BOOK, { constructor: 5, toString: 1 })).toEqual({ amount: 0n, lines: [] });
  });
});

describe('quote is monotone in usage', () => {
  const dimensions = ['input_tokens', 'output_tokens', 'half', 'free', 'unpriced'] as const;
  const units = fc.oneof(fc.nat(10_000_000), fc.nat(Number.MAX_SAFE_INTEGER));
  const usage = fc.dictionary(fc.constantFrom(...dimensions), units, { maxKeys: dimensions.length });
  const prices = fc.dictionary(fc.constantFrom(...dimensions), fc.bigInt({ min: 0n, max: 10n ** 12n }));

  it('increasing any dimension never decreases the amount', () => {
    fc.assert(
      fc.property(prices, usage, fc.constantFrom(...dimensions), units, (unitPrices, before, dimension, more) => {
        const current = before[dimension] ?? 0;
        const after = { ...before, [dimension]: Math.min(Number.MAX_SAFE_INTEGER, current + more) };
        expect(quote(book(unitPrices), after).amount >= quote(book(unitPrices), before).amount).toBe(true);
      }),
    );
  });

  it('the amount is the sum of its lines and never negative', () => {
    fc.assert(
      fc.property(prices, usage, (unitPrices, used) => {
        const quoted = quote(book(unitPrices), used);
        expect(quoted.amount).toBe(quoted.lines.reduce((sum, line) => sum + line.amount, 0n));
        expect(quoted.amount >= 0n).toBe(true);
      }),
    );
  });
});

describe('validateUsage', () => {
  it.each<[string, unknown]>([
    ['null', null],
    ['undefined', undefined],
    ['a number', 5],
    ['a string', '{"a":1}'],
    ['an empty array', []],
    ['an array', [1]],
    ['a Map', new Map([['a', 1]])],
    ['a Date', new Date(0)],
    ['a negative count', { a: -1 }],
    ['a fractional count', { a: 1.5 }],
    ['NaN', { a: Number.NaN }],
    ['Infinity', { a: Number.POSITIVE_INFINITY }],
    ['-Infinity', { a: Number.NEGATIVE_INFINITY }],
    ['an unsafe integer', { a: 2 ** 53 }],
    ['a numeric string', { a: '5' }],
    ['a bigint', { a: 5n }],
    ['null count', { a: null }],
    ['a nested object', { a: { b: 1 } }],
    ['an empty dimension name', { '': 1 }],
  ])('refuses %s', (_label, input) => {
    expect(() => validateUsage(input)).toThrow(InvalidUsageError);
    try {
      validateUsage(input);
    } catch (error) {
      expect((error as InvalidUsageError).code).toBe('invalid_usage');
    }
  });

  it('accepts zero, the largest safe integer and an empty object', () => {
    expect(validateUsage({ a: 0, b: Number.MAX_SAFE_INTEGER })).toEqual({ a: 0, b: Number.MAX_SAFE_INTEGER });
    expect(validateUsage({})).toEqual({});
  });

  it('normalises -0 and keeps "__proto__" as plain data', () => {
    const parsed: unknown = JSON.parse('{"__proto__": 7, "a": -0}');
    const usage = validateUsage(parsed);
    expect(Object.is(usage['a'], 0)).toBe(true);
    expect(Object.hasOwn(usage, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(usage)).toBe(Object.prototype);
  });

  it('returns a frozen copy', () => {
    const input = { a: 1 };
    const usage = validateUsage(input);
    input.a = 2;
    expect(usage['a']).toBe(1);
    expect(Object.isFrozen(usage)).toBe(true);
  });

  it('quote refuses invalid usage with a typed error', () => {
    expect(() => quote(BOOK, { input_tokens: 1.5 })).toThrow(InvalidUsageError);
  });
});

describe('billable', () => {
  const usage = { input_tokens: 1200, output_tokens: 340 }; // price 2050 micros
  it.each<[string, bigint, bigint, boolean]>([
    ['below the reservation', 10_000n, 2050n, false],
    ['exactly the reservation', 2050n, 2050n, false],
    ['above the reservation: capped', 2000n, 2000n, true],
    ['a zero reservation', 0n, 0n, true],
  ])('%s', (_label, reservation, amount, exceedsReservation) => {
    expect(billable(BOOK, usage, reservation)).toEqual({ amount, price: 2050n, exceedsReservation });
  });

  it('is min(price, reservation)', () => {
    fc.assert(
      fc.property(fc.nat(10_000_000), fc.nat(10_000_000), fc.bigInt({ min: 0n, max: 10n ** 8n }), (i, o, reservation) => {
        const result = billable(BOOK, { input_tokens: i, output_tokens: o }, reservation);
        expect(result.amount).toBe(result.price < reservation ? result.price : reservation);
        expect(result.exceedsReservation).toBe(result.price > reservation);
      }),
    );
  });
});

describe('pricing snapshots', () => {
  it('records everything that made the amount, as JSON-safe strings', () => {
    const snapshot = snapshotOf(BOOK, { output_tokens: 340, input_tokens: 1200, extra: 4 }, 2000n);
    expect(snapshot).toEqual({
      usage: { extra: 4, input_tokens: 1200, output_tokens: 340 },
      priceBookId: 'pb_1',
      model: 'm1',
      currency: 'USD',
      priceVersion: 3,
      unitPrices: { free: '0.000000', half: '0.500000', input_tokens: '1.000000', output_tokens: '2.500000' },
      rounding: ROUNDING_RULE,
      lines: [
        { dimension: 'input_tokens', units: 1200, unitPrice: '1.000000', amount: '0.001200' },
        { dimension: 'output_tokens', units: 340, unitPrice: '2.500000', amount: '0.000850' },
      ],
      price: '0.002050',
      billable: '0.002000',
      cap: '0.002000',
    } satisfies PricingSnapshot);
    expect(ROUNDING_RULE).toBe('per_dimension_half_up_micro');
  });

  it('without a cap, billable is the full price and there is no cap field', () => {
    const snapshot = snapshotOf(BOOK, { half: 1 });
    expect(snapshot.billable).toBe('0.000001');
    expect('cap' in snapshot).toBe(false);
  });

  it('a stored snapshot yields its amount after a JSON round trip, whatever the current prices', () => {
    const stored: PricingSnapshot = JSON.parse(JSON.stringify(snapshotOf(BOOK, { input_tokens: 1200 }, 10_000n)));
    const newerBook = { ...book({ input_tokens: 9_000_000n }), version: 4 };
    expect(amountOfSnapshot(stored)).toBe(1200n);
    expect(quote(newerBook, stored.usage).amount).not.toBe(1200n); // re-pricing would differ
  });

  it('the same inputs give the same snapshot and the same amount', () => {
    const usage = fc.dictionary(fc.constantFrom('input_tokens', 'output_tokens', 'half', 'other'), fc.nat(10 ** 9));
    fc.assert(
      fc.property(usage, fc.option(fc.bigInt({ min: 0n, max: 10n ** 12n }), { nil: undefined }), (used, cap) => {
        const reversed = Object.fromEntries(Object.entries(used).reverse());
        const first = snapshotOf(BOOK, used, cap);
        const second = snapshotOf(BOOK, reversed, cap);
        expect(JSON.stringify(second)).toBe(JSON.stringify(first));
        expect(amountOfSnapshot(first)).toBe(amountOfSnapshot(JSON.parse(JSON.stringify(first))));
        const expected = billable(BOOK, used, cap ?? 10n ** 30n).amount;
        expect(amountOfSnapshot(first)).toBe(expected);
      }),
    );
  });

  it('refuses a snapshot whose billable amount is not canonical money', () => {
    const snapshot = snapshotOf(BOOK, { half: 1 });
    expect(() => amountOfSnapshot({ ...snapshot, billable: '1e3' })).toThrow(InvalidAmountError);
    expect(() => amountOfSnapshot({ ...snapshot, billable: '-1' })).toThrow(InvalidAmountError);
  });

  it('refuses a negative cap', () => {
    expect(() => snapshotOf(BOOK, {}, -1n)).toThrow(RangeError);
  });
});
