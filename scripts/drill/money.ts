import { billableMicros, type UnitPrices } from '../../bench/money.js';
import type { Usage } from './app.js';

/**
 * The arithmetic of what a job must cost is the bench's (bench/money.ts): written from
 * CONTRACT.md ("Money"), not imported from src/, so that a check never agrees with a bug
 * in Tally's pricing. Integer micros (bigint) throughout; decimal strings on the wire.
 */
export { formatMicros, parseMicros, priceMicros, type UnitPrices } from '../../bench/money.js';

/** What a job must have cost in the end: min(price(billed usage), reservation), or nothing when released. */
export function expectedChargeMicros(billedUsage: Usage | null, limits: Usage, unitPrices: UnitPrices): bigint {
  return billedUsage ? billableMicros(billedUsage, limits, unitPrices) : 0n;
}
