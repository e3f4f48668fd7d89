import type { Micros } from '../money/index.js';

/**
 * One immutable version of a model's prices in one currency. A job pins the
 * version at submission; every later amount for that job is priced with it.
 */
export interface PriceBook {
  readonly id: string;
  readonly model: string;
  readonly currency: string;
  readonly version: number;
  /** Micros per 1,000,000 units of the dimension; never negative. */
  readonly unitPrices: Readonly<Record<string, Micros>>;
}

/** Own properties only: a dimension called "constructor" must not find Object's. */
export function unitPriceOf(book: PriceBook, dimension: string): Micros | undefined {
  return Object.hasOwn(book.unitPrices, dimension) ? book.unitPrices[dimension] : undefined;
}

/** The dimensions this book bills, sorted: what a job's limits must name at least one of. */
export function pricedDimensions(book: PriceBook): string[] {
  return Object.keys(book.unitPrices).sort();
}

/** Whether two sets of unit prices are the same prices, however they were spelled. */
export function sameUnitPrices(a: Readonly<Record<string, bigint>>, b: Readonly<Record<string, bigint>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((dimension) => Object.hasOwn(b, dimension) && a[dimension] === b[dimension]);
}
