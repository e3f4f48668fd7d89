/**
 * Why a string is not an amount, in words an API caller can act on. Only
 * called after the strict pattern has already refused the input, so the order
 * of the checks decides which of several faults is named, nothing else.
 */
const FAULTS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^$/, 'is empty'],
  [/\s/, 'must not contain spaces'],
  [/^-?0[xXbBoO]/, 'must be written in decimal, not hex, binary or octal'],
  // A number in exponent form, not any string with an "e" in it ("twelve" is no exponent).
  [/^[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+$/, 'must not use exponent notation'],
  [/\+/, 'must not carry a "+" sign'],
  [/[,_']/, 'must not contain digit separators such as "," or "_"'],
  [/^-?\./, 'needs a digit before the decimal point ("0.5", not ".5")'],
  [/\.$/, 'needs digits after the decimal point ("1" or "1.0", not "1.")'],
  [/\.[0-9]{7,}$/, 'has more than 6 decimals'],
  [/^-?0[0-9]/, 'must not have leading zeros'],
];

/** What is wrong with a string that is not an amount, as the end of a sentence about it. */
export function explainMalformed(input: string): string {
  return FAULTS.find(([pattern]) => pattern.test(input))?.[1] ?? 'is not a decimal string like "12.50"';
}

/** Echo at most a short prefix: messages end up in logs and error bodies. */
export function quote(input: string): string {
  return JSON.stringify(input.length > 32 ? `${input.slice(0, 32)}…` : input);
}
