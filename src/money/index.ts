/** Exact money: bigint micro-units inside, canonical decimal strings outside. */
export { MAX_AMOUNT_MICROS, MICROS_PER_UNIT, SCALE, type Micros } from './scale.js';
export { AmountOutOfRange, InvalidAmountError } from './errors.js';
export { parseAmount, parseUnitPrice, type ParseAmountOptions } from './parse.js';
export { formatAmount } from './format.js';
