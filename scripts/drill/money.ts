import type { Usage } from './app.js';

/**
 * The drill's own arithmetic for what every job must cost, from CONTRACT.md ("Money"),
 * not imported from src/: a check that reused Tally's pricing would agree with any bug
 * in it. Integer micros (bigint) throughout; decimal strings on the wire.
 */

/** decimal strings in the major unit, per 1,000,000 units */
export type UnitPrices = Record<string, string>;

const SCALE = 1_000_000n;

/** "12.345" → 12345000n. Only the plain decimals the drill and Tally write. */
export function parseMicros(text: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d{1,6}))?$/.exec(text);
  if (!match) throw new Error(`not an amount: ${JSON.stringify(text)}`);
  const [, sign, whole, fraction = ''] = match;
  const micros = BigInt(whole!) * SCALE + BigInt(fraction.padEnd(6, '0'));
  return sign === '-' ? -micros : micros;
}

export function formatMicros(micros: bigint): string {
  const sign = micros < 0n ? '-' : '';
  const abs = micros < 0n ? -micros : micros;
  return `${sign}${abs / SCALE}.${(abs % SCALE).toString().padStart(6, '0')}`;
}

/** Per priced dimension units × unit price / 1,000,000, rounded half-up to the micro, summed. */
export function priceMicros(usage: Usage, unitPrices: UnitPrices): bigint {
  let total = 0n;
  for (const [dimension, price] of Object.entries(unitPrices)) {
    const units = BigInt(usage[dimension] ?? 0);
    total += (units * parseMicros(price) + SCALE / 2n) / SCALE;
  }
  return total;
}

/** What a job must have cost in the end: min(price(billed usage), reservation), or nothing when released. */
export function expectedChargeMicros(billedUsage: Usage | null, limits: Usage, unitPrices: UnitPrices): bigint {
  if (!billedUsage) return 0n;
  const price = priceMicros(billedUsage, unitPrices);
  const reservation = priceMicros(limits, unitPrices);
  return price < reservation ? price : reservation;
}
