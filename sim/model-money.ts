import { SIM_UNIT_PRICES, type Usage } from './ops.js';

/**
 * The reference model's arithmetic, written from the contract (docs/CONTRACT.md and the
 * outside contract's "Money"), never from src/: money is bigint micro-units, usage is
 * integer units, and a day is a UTC calendar day.
 */

/** Unit prices are per 1,000,000 units. */
const UNITS_PER_PRICE = 1_000_000n;

/** Largest amount anything may hold: 10^12 major units (1,000,000 micro-units each). */
export const MAX_AMOUNT = 1_000_000_000_000n * 1_000_000n;

/**
 * The price of some usage: per dimension that has a unit price, units × unit price /
 * 1,000,000 rounded half-up to the micro-unit, summed; dimensions without a price are
 * recorded, not billed.
 */
export function price(usage: Usage, unitPrices: Readonly<Record<string, bigint>> = SIM_UNIT_PRICES): bigint {
  let total = 0n;
  for (const [dimension, units] of Object.entries(usage)) {
    const unitPrice = unitPrices[dimension];
    if (unitPrice === undefined) continue;
    total += roundHalfUp(BigInt(units) * unitPrice, UNITS_PER_PRICE);
  }
  return total;
}

/** n / d rounded half-up, for n ≥ 0 and d > 0: floor((2n + d) / 2d). */
export function roundHalfUp(n: bigint, d: bigint): bigint {
  return (2n * n + d) / (2n * d);
}

export function isPriced(dimension: string): boolean {
  return SIM_UNIT_PRICES[dimension] !== undefined;
}

/** Usage values are non-negative safe integers (JSON numbers); anything else is a 4xx. */
export function isUnits(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}

/** Each dimension's largest value of the two: what cumulative reports say so far. */
export function maxUsage(before: Usage | null, report: Usage): Record<string, number> {
  const merged: Record<string, number> = { ...(before ?? {}) };
  for (const [dimension, units] of Object.entries(report)) merged[dimension] = Math.max(merged[dimension] ?? 0, units);
  return merged;
}

/** Limits raised by an `add`, dimension by dimension. */
export function addUsage(limits: Usage, add: Usage): Record<string, number> {
  const sum: Record<string, number> = { ...limits };
  for (const [dimension, units] of Object.entries(add)) sum[dimension] = (sum[dimension] ?? 0) + units;
  return sum;
}

export function minMicros(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

/** The UTC day of an instant, as spend limits count it ("2026-12-02"). */
export function dayOf(atMs: number): string {
  return new Date(atMs).toISOString().slice(0, 10);
}

/** An amount as the API writes it ("1.200000", "-0.500000"), for messages. */
export function formatMicros(micros: bigint): string {
  const sign = micros < 0n ? '-' : '';
  const abs = micros < 0n ? -micros : micros;
  return `${sign}${abs / 1_000_000n}.${(abs % 1_000_000n).toString().padStart(6, '0')}`;
}
