import { formatAmount, parseAmount, type Micros } from '../money/index.js';
import type { PriceBook } from './price-book.js';
import { quote } from './quote.js';
import { ROUNDING_RULE } from './rounding.js';
import { sortedEntries } from './sorted.js';
import { validateUsage, type Usage } from './usage.js';

/**
 * Everything that made a settlement's amount, stored with it as jsonb and
 * returned on retry. Amounts are decimal strings (formatAmount) because JSON
 * has no bigint; keys are written in sorted order so equal snapshots serialise
 * equally.
 */
export interface PricingSnapshot {
  readonly usage: Usage;
  readonly priceBookId: string;
  readonly model: string;
  readonly currency: string;
  readonly priceVersion: number;
  readonly unitPrices: Readonly<Record<string, string>>;
  readonly rounding: typeof ROUNDING_RULE;
  readonly lines: ReadonlyArray<{
    readonly dimension: string;
    readonly units: number;
    readonly unitPrice: string;
    readonly amount: string;
  }>;
  /** The full price of `usage`. */
  readonly price: string;
  /** What is charged: min(price, cap), or price when there is no cap. */
  readonly billable: string;
  /** The reservation that capped the amount, when there was one. */
  readonly cap?: string;
}

export function snapshotOf(book: PriceBook, usage: Usage, cap?: Micros): PricingSnapshot {
  if (cap !== undefined && cap < 0n) throw new RangeError('a pricing cap must not be negative');
  const quoted = quote(book, usage);
  const charged = cap !== undefined && quoted.amount > cap ? cap : quoted.amount;
  return {
    usage: Object.fromEntries(sortedEntries(validateUsage(usage))),
    priceBookId: book.id,
    model: book.model,
    currency: book.currency,
    priceVersion: book.version,
    unitPrices: Object.fromEntries(
      sortedEntries(book.unitPrices).map(([dimension, price]) => [dimension, formatAmount(price)]),
    ),
    rounding: ROUNDING_RULE,
    lines: quoted.lines.map((line) => ({
      dimension: line.dimension,
      units: line.units,
      unitPrice: formatAmount(line.unitPrice),
      amount: formatAmount(line.amount),
    })),
    price: formatAmount(quoted.amount),
    billable: formatAmount(charged),
    ...(cap !== undefined ? { cap: formatAmount(cap) } : {}),
  };
}

/**
 * The amount a stored snapshot charged. A retry reads this instead of pricing
 * again, so newer prices or a changed payload can never alter a settled amount.
 */
export function amountOfSnapshot(snapshot: PricingSnapshot): Micros {
  return parseAmount(snapshot.billable, { allowZero: true });
}
