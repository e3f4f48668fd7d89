import type { Micros } from '../money/index.js';

/**
 * The rounding rule, named so that a stored snapshot says which rule made its
 * amount (CONTRACT "Money"): for each dimension that has a unit price,
 * `units × unitPrice / 1_000_000`, rounded half-up to the micro; the amount is
 * the sum of those per-dimension amounts. Dimensions without a unit price are
 * recorded in the snapshot, not billed. Rounding per dimension (not once on the
 * total) lets each quote line be checked on its own.
 */
export const ROUNDING_RULE = 'per_dimension_half_up_micro';
export type RoundingRule = typeof ROUNDING_RULE;

/** Unit prices are quoted per this many units. */
export const UNITS_PER_PRICE = 1_000_000n;

/** ⌊n / d + ½⌋ for n ≥ 0, d > 0: a tie (exactly half a micro) rounds up. */
export function divideHalfUp(numerator: bigint, divisor: bigint): bigint {
  if (numerator < 0n || divisor <= 0n) {
    throw new RangeError('divideHalfUp is defined for a non-negative numerator and positive divisor');
  }
  return (2n * numerator + divisor) / (2n * divisor);
}

/** The amount of one dimension's usage at one unit price. */
export function lineAmount(units: number, unitPrice: Micros): Micros {
  return divideHalfUp(BigInt(units) * unitPrice, UNITS_PER_PRICE);
}
