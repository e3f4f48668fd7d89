import { InvalidArgumentError } from 'commander';

/**
 * Repeatable `--usage input_tokens=1200` style options, collected into one object.
 * Values are checked only as far as the command line can say (a whole number, a
 * decimal string); the server's answer says the rest.
 */
export function collectPairs<T>(parse: (value: string, key: string) => T) {
  return (text: string, previous: Record<string, T> | undefined): Record<string, T> => {
    const at = text.indexOf('=');
    if (at <= 0) throw new InvalidArgumentError(`expected key=value, got "${text}"`);
    const key = text.slice(0, at);
    return { ...previous, [key]: parse(text.slice(at + 1), key) };
  };
}

/** Usage and limits: non-negative whole numbers, sent as JSON numbers. */
export function wholeNumber(value: string, key: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError(`${key} must be a non-negative whole number, got "${value}"`);
  return n;
}

/** Amounts stay the decimal strings they were typed as ("1.50"): never a float on the way. */
export function decimalString(value: string): string {
  return value;
}
