/** Pure pricing: usage × pinned price book → exact amounts and stored snapshots. */
export { InvalidUsageError, validateUsage, type Usage } from './usage.js';
export { pricedDimensions, sameUnitPrices, unitPriceOf, type PriceBook } from './price-book.js';
export { ROUNDING_RULE, UNITS_PER_PRICE, divideHalfUp, lineAmount, type RoundingRule } from './rounding.js';
export { quote, type Quote, type QuoteLine } from './quote.js';
export { billable, type Billable } from './billable.js';
export { amountOfSnapshot, snapshotOf, type PricingSnapshot } from './snapshot.js';
