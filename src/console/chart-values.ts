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

/**
 * An entry's instant as a chart's x: unix seconds with its microseconds (the API's
 * instants carry six digits). A wallet's burst of entries falls within one second; at
 * whole seconds they all shared one x and the chart drew the burst as one vertical
 * stroke ending wherever uPlot last drew, not at the balance the wallet was left with.
 */
export function chartSeconds(instant: string): number {
  const micros = /\.\d{3}(\d{3})Z$/.exec(instant)?.[1];
  return Date.parse(instant) / 1000 + (micros ? Number(micros) / 1_000_000 : 0);
}
