import { MICROS_PER_UNIT, SCALE, type Micros } from './scale.js';

/**
 * The canonical wire form: always exactly SCALE decimals ("12.500000",
 * "0.000150", "-3.000000"), so equal amounts are equal strings and a stored
 * snapshot compares byte for byte.
 */
export function formatAmount(micros: Micros): string {
  if (typeof micros !== 'bigint') {
    // A number here would be float money; refuse loudly rather than format it.
    throw new TypeError(`formatAmount expects a bigint of micros, got ${typeof micros}`);
  }
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const whole = abs / MICROS_PER_UNIT;
  const fraction = (abs % MICROS_PER_UNIT).toString().padStart(SCALE, '0');
  return `${negative ? '-' : ''}${whole}.${fraction}`;
}
