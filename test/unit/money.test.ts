import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  InvalidAmountError,
  MAX_AMOUNT_MICROS,
  SCALE,
  formatAmount,
  parseAmount,
  parseUnitPrice,
  type ParseAmountOptions,
} from '../../src/money/index.js';

function refusal(input: unknown, opts?: ParseAmountOptions): InvalidAmountError {
  try {
    parseAmount(input, opts);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidAmountError);
    return error as InvalidAmountError;
  }
  throw new Error(`expected ${String(input)} to be refused`);
}

describe('formatAmount', () => {
  it.each([
    [12_500_000n, '12.500000'],
    [150n, '0.000150'],
    [0n, '0.000000'],
    [1n, '0.000001'],
    [1_000_000n, '1.000000'],
    [-3_000_000n, '-3.000000'],
    [-1n, '-0.000001'],
    [MAX_AMOUNT_MICROS, '1000000000000.000000'],
  ])('%s → %s', (micros, text) => {
    expect(formatAmount(micros)).toBe(text);
  });

  it('refuses a number, which would be float money', () => {
    expect(() => formatAmount(1 as unknown as bigint)).toThrow(TypeError);
  });
});

describe('parseAmount accepts', () => {
  it.each<[string, ParseAmountOptions | undefined, bigint]>([
    ['12.50', undefined, 12_500_000n],
    ['12.5', undefined, 12_500_000n],
    ['0.000150', undefined, 150n],
    ['0.000001', undefined, 1n],
    ['1', undefined, 1_000_000n],
    ['1000000000000', undefined, MAX_AMOUNT_MICROS],
    ['1000000000000.000000', undefined, MAX_AMOUNT_MICROS],
    ['0', { allowZero: true }, 0n],
    ['0.000000', { allowZero: true }, 0n],
    ['-1.5', { allowNegative: true }, -1_500_000n],
    ['-1000000000000', { allowNegative: true }, -MAX_AMOUNT_MICROS],
  ])('%s (%o) → %s', (text, opts, micros) => {
    expect(parseAmount(text, opts)).toBe(micros);
  });

  it('uses the documented scale', () => {
    expect(SCALE).toBe(6);
    expect(MAX_AMOUNT_MICROS).toBe(10n ** 18n);
  });
});

describe('parseAmount refuses', () => {
  const signed = { allowNegative: true, allowZero: true };
  it.each<[string, unknown, ParseAmountOptions | undefined, RegExp]>([
    ['a number', 12.5, undefined, /string.*not a number/],
    ['an integer number', 1, undefined, /not a number/],
    ['a bigint', 1n, undefined, /not a bigint/],
    ['null', null, undefined, /not null/],
    ['undefined', undefined, undefined, /not undefined/],
    ['an object', { amount: '1' }, undefined, /not an object/],
    ['an array', ['1'], undefined, /not an array/],
    ['a boolean', true, undefined, /not a boolean/],
    ['the empty string', '', undefined, /is empty/],
    ['an exponent', '1e3', undefined, /exponent/],
    ['an upper-case exponent', '1E3', undefined, /exponent/],
    ['a fractional exponent', '1.5e-2', signed, /exponent/],
    ['seven decimals', '1.0000001', undefined, /more than 6 decimals/],
    ['a plus sign', '+1', undefined, /"\+" sign/],
    ['a minus sign by default', '-1', undefined, /must not be negative/],
    ['a minus sign when only zero is allowed', '-0', { allowZero: true }, /must not be negative/],
    ['a leading space', ' 1', undefined, /spaces/],
    ['a trailing space', '1 ', undefined, /spaces/],
    ['an inner space', '1 000', undefined, /spaces/],
    ['a tab', '\t1', undefined, /spaces/],
    ['a newline', '1\n', undefined, /spaces/],
    ['a no-break space', '1\u00a0000', undefined, /spaces/],
    ['a comma separator', '1,000', undefined, /separators/],
    ['a comma decimal point', '1,5', undefined, /separators/],
    ['an underscore separator', '1_000', undefined, /separators/],
    ['hex', '0x10', undefined, /decimal, not hex/],
    ['binary', '0b1', undefined, /decimal, not hex/],
    ['a leading zero', '01', undefined, /leading zeros/],
    ['leading zeros before a point', '00.5', undefined, /leading zeros/],
    ['a trailing dot', '1.', undefined, /digits after the decimal point/],
    ['a leading dot', '.5', undefined, /digit before the decimal point/],
    ['a negative leading dot', '-.5', signed, /digit before the decimal point/],
    ['one micro above the maximum', '1000000000000.000001', undefined, /is too large: at most 10\^12 major units/],
    ['one unit above the maximum', '1000000000001', undefined, /is too large: at most 10\^12 major units/],
    ['a negative beyond the maximum', '-1000000000000.000001', signed, /is too large: at most 10\^12 major units/],
    ['zero by default', '0', undefined, /must be positive/],
    ['zero with decimals by default', '0.000000', undefined, /must be positive/],
    ['negative zero', '-0', signed, /negative zero/],
    ['negative zero with decimals', '-0.000000', signed, /negative zero/],
    ['a double minus', '--1', signed, /not a decimal string/],
    ['two decimal points', '1.2.3', undefined, /not a decimal string/],
    ['letters', 'abc', undefined, /not a decimal string/],
    ['a word with an e in it (no exponent)', 'twelve', undefined, /not a decimal string/],
    ['an exponent without digits', '1e', undefined, /not a decimal string/],
    ['NaN', 'NaN', undefined, /not a decimal string/],
    ['Infinity', 'Infinity', undefined, /not a decimal string/],
    ['non-ASCII digits', '\u0661', undefined, /not a decimal string/],
    ['full-width digits', '\uff11', undefined, /not a decimal string/],
    ['a currency symbol', '$1', undefined, /not a decimal string/],
    ['a very long digit string', '9'.repeat(1000), undefined, /too long/],
  ])('%s', (_label, input, opts, message) => {
    const error = refusal(input, opts);
    expect(error.code).toBe('invalid_amount');
    expect(error.message).toMatch(message);
  });

  it('any string containing e, a space, a comma or a plus', () => {
    const poisoned = fc
      .tuple(fc.string(), fc.constantFrom('e', 'E', ' ', ',', '+'), fc.string())
      .map(([before, bad, after]) => before + bad + after);
    fc.assert(
      fc.property(poisoned, fc.boolean(), fc.boolean(), (text, allowNegative, allowZero) => {
        expect(() => parseAmount(text, { allowNegative, allowZero })).toThrow(InvalidAmountError);
      }),
    );
  });
});

describe('round trips', () => {
  it('parseAmount(formatAmount(x)) = x for every amount in [1, 10^18]', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: MAX_AMOUNT_MICROS }), (micros) => {
        expect(parseAmount(formatAmount(micros))).toBe(micros);
        expect(parseAmount(formatAmount(-micros), { allowNegative: true })).toBe(-micros);
      }),
    );
  });

  it('formatAmount(parseAmount(s)) = s for canonical strings', () => {
    const canonical = fc
      .tuple(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.integer({ min: 0, max: 999_999 }))
      .filter(([whole, fraction]) => (whole > 0n || fraction > 0) && (whole < 10n ** 12n || fraction === 0))
      .map(([whole, fraction]) => `${whole}.${String(fraction).padStart(6, '0')}`);
    fc.assert(
      fc.property(canonical, (text) => {
        expect(formatAmount(parseAmount(text))).toBe(text);
      }),
    );
  });

  it('shorter decimal forms parse to the same amount as their canonical form', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: MAX_AMOUNT_MICROS }), (micros) => {
        const short = formatAmount(micros).replace(/\.?0+$/, '');
        expect(parseAmount(short)).toBe(micros);
      }),
    );
  });
});

describe('parseUnitPrice', () => {
  it('accepts zero (a free dimension) and ordinary prices', () => {
    expect(parseUnitPrice('0')).toBe(0n);
    expect(parseUnitPrice('0.50')).toBe(500_000n);
    expect(parseUnitPrice('2.00')).toBe(2_000_000n);
  });

  it('refuses negatives and non-strings', () => {
    expect(() => parseUnitPrice('-1')).toThrow(InvalidAmountError);
    expect(() => parseUnitPrice(2)).toThrow(InvalidAmountError);
  });
});
