import type { Micros } from '../money/index.js';
import { unitPriceOf, type PriceBook } from './price-book.js';
import { lineAmount } from './rounding.js';
import { sortedEntries } from './sorted.js';
import { validateUsage, type Usage } from './usage.js';

export interface QuoteLine {
  readonly dimension: string;
  readonly units: number;
  readonly unitPrice: Micros;
  readonly amount: Micros;
}

/** The full price of some usage; `lines` has one entry per priced dimension used. */
export interface Quote {
  readonly amount: Micros;
  readonly lines: readonly QuoteLine[];
}

/**
 * Prices usage with one book (see ROUNDING_RULE). Usage is re-validated here
 * because BigInt() of a fractional count would throw an untyped RangeError.
 */
export function quote(book: PriceBook, usage: Usage): Quote {
  const lines: QuoteLine[] = [];
  for (const [dimension, units] of sortedEntries(validateUsage(usage))) {
    const unitPrice = unitPriceOf(book, dimension);
    if (unitPrice === undefined) continue; // recorded in the snapshot, not billed
    if (unitPrice < 0n) {
      throw new RangeError(`price book ${book.id} has a negative unit price for ${dimension}`);
    }
    lines.push({ dimension, units, unitPrice, amount: lineAmount(units, unitPrice) });
  }
  const amount = lines.reduce((sum, line) => sum + line.amount, 0n);
  return { amount, lines };
}

