/**
 * Amounts are integers of micro-units: one major unit (a dollar, a euro) is
 * 10^SCALE micros. Every currency Tally bills uses this one fixed scale, so an
 * amount never needs its currency to be interpreted, only to be compared.
 */
export type Micros = bigint;

export const SCALE = 6;

export const MICROS_PER_UNIT: Micros = 10n ** BigInt(SCALE);

/** 10^12 major units: the largest amount accepted on the wire (CONTRACT "Money"). */
export const MAX_AMOUNT_MICROS: Micros = 10n ** 18n;
