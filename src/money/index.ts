/** Exact money: bigint micro-units inside, canonical decimal strings outside. */
export { MAX_AMOUNT_MICROS, MICROS_PER_UNIT, SCALE, type Micros } from './scale.js';
export { AmountOutOfRange, InvalidAmountError } from './errors.js';
export { amountFault, parseAmount, parseUnitPrice, type ParseAmountOptions } from './parse.js';
export { formatAmount } from './format.js';
/** An amount as sent, quoted and cut short for a message (what parseAmount's messages echo). */
export { quote as quoteAmount } from './explain.js';
