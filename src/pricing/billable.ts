import type { Micros } from '../money/index.js';
import type { PriceBook } from './price-book.js';
import { quote } from './quote.js';
import type { Usage } from './usage.js';

export interface Billable {
  /** What is charged: min(price, reservation). */
  readonly amount: Micros;
  /** The full price of the usage at the pinned version. */
  readonly price: Micros;
  /** True when the usage cost more than the hold; raises usage_exceeds_reservation. */
  readonly exceedsReservation: boolean;
}

/**
 * The hold is the most a job can be charged (CONTRACT "Billing rules"): funds
 * were checked only for the reservation, so usage beyond it is reported, not billed.
 */
export function billable(book: PriceBook, usage: Usage, reservation: Micros): Billable {
  const price = quote(book, usage).amount;
  const exceedsReservation = price > reservation;
  return { amount: exceedsReservation ? reservation : price, price, exceedsReservation };
}
