import { SCALE, parseAmount, type Micros } from '../../money/index.js';

/**
 * Stripe's amounts are integers in the currency's smallest unit (2000 = 20.00 USD; a
 * zero-decimal currency such as JPY has none: 500 = 500 JPY), and its currency codes are
 * lower case. Tally's are micro-units of the major unit (money/scale.ts). Converted
 * exactly, both ways; an amount that is not a whole number of minor units is refused
 * where a charge is asked for (a card cannot be charged a fraction of a cent).
 */

/** Stripe's zero-decimal currencies (its "Currencies" documentation). */
const ZERO_DECIMAL = new Set([
  'bif',
  'clp',
  'djf',
  'gnf',
  'jpy',
  'kmf',
  'krw',
  'mga',
  'pyg',
  'rwf',
  'ugx',
  'vnd',
  'vuv',
  'xaf',
  'xof',
  'xpf',
]);
/** Stripe's three-decimal currencies (charged in multiples of 10 of their minor unit). */
const THREE_DECIMAL = new Set(['bhd', 'jod', 'kwd', 'omr', 'tnd']);

/**
 * Charges Stripe accepts only in whole multiples of this many minor units, from its
 * "Supported currencies" documentation (docs.stripe.com/currencies, "Three-decimal
 * currencies" and "Special cases"):
 * - BHD, JOD, KWD, OMR, TND: amounts are sent with three decimals, but the last digit must
 *   be 0 (KWD 5.125 = 5125 is refused; 5.120 = 5120 is taken): multiples of 10.
 * - ISK: zero-decimal in fact, sent as two-decimal for backwards compatibility with the
 *   decimals always 00 (5 ISK = 500): multiples of 100.
 * - HUF (and TWD) are also sent as two-decimal; their charges may carry fractions (only
 *   payouts need whole units), so they take any whole minor amount, like USD.
 */
const CHARGE_STEP: Record<string, bigint> = { bhd: 10n, jod: 10n, kwd: 10n, omr: 10n, tnd: 10n, isk: 100n };

/** The smallest chargeable step, in minor units (1 for most currencies). */
export function chargeStepMinor(currency: string): bigint {
  return CHARGE_STEP[currency.toLowerCase()] ?? 1n;
}

/** Digits after the decimal point of a currency's minor unit, as Stripe counts them. */
export function minorDigits(currency: string): number {
  const code = currency.toLowerCase();
  if (ZERO_DECIMAL.has(code)) return 0;
  if (THREE_DECIMAL.has(code)) return 3;
  return 2;
}

/** Micros in one minor unit of the currency (USD: 10,000; JPY: 1,000,000). */
export function microsPerMinor(currency: string): Micros {
  return 10n ** BigInt(SCALE - minorDigits(currency));
}

export function minorToMicros(minor: bigint, currency: string): Micros {
  return minor * microsPerMinor(currency);
}

/**
 * The exact minor amount Stripe can charge, or null when `micros` is not a whole number of
 * the currency's chargeable steps (a fraction of a cent; KWD 5.125; ISK 5.50).
 */
export function microsToMinorExact(micros: Micros, currency: string): bigint | null {
  const per = microsPerMinor(currency) * chargeStepMinor(currency);
  return micros % per === 0n ? (micros / per) * chargeStepMinor(currency) : null;
}

/** Rounded up to the next chargeable amount (what a recharge charges, so it reaches its target). */
export function microsToMinorCeil(micros: Micros, currency: string): bigint {
  const per = microsPerMinor(currency) * chargeStepMinor(currency);
  return micros <= 0n ? 0n : ((micros + per - 1n) / per) * chargeStepMinor(currency);
}

/** Rounded down to a chargeable amount (what a limit still allows). */
export function microsToMinorFloor(micros: Micros, currency: string): bigint {
  const per = microsPerMinor(currency) * chargeStepMinor(currency);
  return micros <= 0n ? 0n : (micros / per) * chargeStepMinor(currency);
}

/**
 * Stripe's minimum charge per currency, in major units (its "Minimum and maximum charge
 * amounts" table); other currencies: the equivalent of 0.50 USD is not known here, so one
 * major unit (or 50 for zero-decimal currencies) is asked for.
 */
const MINIMUM_MAJOR: Record<string, string> = {
  usd: '0.50',
  aud: '0.50',
  brl: '0.50',
  cad: '0.50',
  chf: '0.50',
  dkk: '2.50',
  eur: '0.50',
  gbp: '0.30',
  hkd: '4.00',
  inr: '0.50',
  jpy: '50',
  mxn: '10',
  nok: '3.00',
  nzd: '0.50',
  pln: '2.00',
  sek: '3.00',
  sgd: '0.50',
};

/** Stripe's minimum charge in the currency, in micros. */
export function minimumChargeMicros(currency: string): Micros {
  return parseAmount(MINIMUM_MAJOR[currency.toLowerCase()] ?? (minorDigits(currency) === 0 ? '50' : '1.00'));
}

/** Stripe's spelling of a currency code. */
export function stripeCurrency(currency: string): string {
  return currency.toLowerCase();
}

/** Whether two currency codes name one currency (Stripe's are lower case, Tally's upper). */
export function sameCurrency(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/**
 * A minor amount as the Stripe SDK's parameters take it: a JavaScript number. Exact for
 * every whole number up to 2^53 − 1 (Stripe's own maximum charge is eight digits); past
 * that a number would silently round, so it is refused instead of converted.
 */
export function stripeAmount(minor: bigint): number {
  if (minor < 0n || minor > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${minor} minor units cannot be sent to Stripe exactly`);
  return Number(minor);
}
