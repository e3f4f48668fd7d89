import { parseAmount } from '../money/index.js';

/**
 * A chart needs numbers; money stays exact: an amount is handed to the chart as its
 * integer count of micro-units, which a JavaScript number holds exactly up to 2^53
 * (9,007,199,254 major units), and refused beyond that rather than rounded. The
 * browser only formats these integers back into decimal strings (charts.js formatMicros:
 * string slicing, no division).
 */
export function chartMicros(amount: string | undefined): number {
  if (amount === undefined) return 0;
  const micros = parseAmount(amount, { allowNegative: true, allowZero: true });
  if (micros > BigInt(Number.MAX_SAFE_INTEGER) || micros < -BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`${amount} is beyond what a chart can draw exactly`);
  }
  return Number(micros);
}
