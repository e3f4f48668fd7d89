import { InvalidAmountError } from './errors.js';
import { explainMalformed, quote } from './explain.js';
import { MAX_AMOUNT_MICROS, MICROS_PER_UNIT, SCALE, type Micros } from './scale.js';

export interface ParseAmountOptions {
  /** Accept a leading "-" (signed adjustments); a credit or price never is. */
  readonly allowNegative?: boolean;
  /** Accept zero; amounts are positive unless a caller says otherwise. */
  readonly allowZero?: boolean;
}

/**
 * Exactly one spelling per number: no leading zeros ("01" is refused, not
 * read as 1), no "+", at most SCALE decimals. A strict grammar means a
 * client's bug ("1e3", "1,000", 0.1 as a float) is a 400, never a wrong charge.
 */
const DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]{1,6}))?$/;

/** Longer than any valid amount; checked first so nothing huge reaches BigInt. */
const MAX_INPUT_LENGTH = 64;

export function parseAmount(input: unknown, opts: ParseAmountOptions = {}): Micros {
  if (typeof input !== 'string') {
    throw new InvalidAmountError(
      `amount must be a decimal string such as "12.50", not ${describeType(input)}`,
    );
  }
  const read = readAmount(input, opts);
  if (typeof read === 'string') throw new InvalidAmountError(`amount ${quote(input)} ${read}`);
  return read;
}

/**
 * What is wrong with a string as an amount, as the end of a sentence about it ("is too
 * large: …", "has more than 6 decimals"), or null when it is one. The API asks it too
 * when its schema's pattern refused an amount before any route ran (api/validation-errors.ts),
 * so both doors name the same fault: a value too large is never called "too many decimals".
 */
export function amountFault(input: string, opts: ParseAmountOptions = {}): string | null {
  const read = readAmount(input, opts);
  return typeof read === 'string' ? read : null;
}

/** The amount, or what is wrong with it. */
function readAmount(input: string, opts: ParseAmountOptions): Micros | string {
  if (input.length > MAX_INPUT_LENGTH) return 'is too long to be an amount';
  const negative = input.startsWith('-');
  if (negative && opts.allowNegative !== true) return 'must not be negative';
  const match = DECIMAL.exec(negative ? input.slice(1) : input);
  if (match === null) return explainMalformed(input);

  const [, whole = '', fraction = ''] = match;
  const micros = BigInt(whole) * MICROS_PER_UNIT + BigInt(fraction.padEnd(SCALE, '0'));
  if (micros > MAX_AMOUNT_MICROS) return `is too large: at most 10^12 major units (${MAX_AMOUNT_MICROS / MICROS_PER_UNIT})`;
  if (micros === 0n) {
    // "-0" has a canonical spelling, "0"; refusing it keeps one spelling per number.
    if (negative) return 'is a negative zero; write "0"';
    if (opts.allowZero !== true) return 'must be positive';
  }
  return negative ? -micros : micros;
}

/** A unit price may be zero (a free dimension) but never negative. */
export function parseUnitPrice(input: unknown): Micros {
  return parseAmount(input, { allowZero: true });
}

function describeType(input: unknown): string {
  if (input === null || input === undefined) return String(input);
  if (Array.isArray(input)) return 'an array';
  return typeof input === 'object' ? 'an object' : `a ${typeof input}`;
}
