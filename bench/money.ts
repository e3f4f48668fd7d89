/**
 * The harness's own arithmetic for what every job must cost, written from CONTRACT.md
 * ("Money") and not imported from src/: a verification that reused Tally's pricing code
 * would agree with any bug in it.
 */

export type Usage = Record<string, number>;
/** decimal strings in the major unit, per 1,000,000 units */
export type UnitPrices = Record<string, string>;

const SCALE = 1_000_000n;

/** "12.345" → 12345000n micros. Only the plain decimals the harness itself writes. */
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

/** Per dimension units × unit price / 1,000,000, rounded half-up to the micro, summed. */
export function priceMicros(usage: Usage, unitPrices: UnitPrices): bigint {
  let total = 0n;
  for (const [dimension, price] of Object.entries(unitPrices)) {
    const units = BigInt(usage[dimension] ?? 0);
    total += (units * parseMicros(price) + SCALE / 2n) / SCALE;
  }
  return total;
}

/** What a completion with this usage must capture: min(price(usage), reservation). */
export function billableMicros(usage: Usage, limits: Usage, unitPrices: UnitPrices): bigint {
  const price = priceMicros(usage, unitPrices);
  const reservation = priceMicros(limits, unitPrices);
  return price < reservation ? price : reservation;
}
