/**
 * Numeric settings from the environment, checked once at start: a typo stops the
 * process with a sentence naming the variable, instead of a NaN deep in a query.
 */
export function integerSetting(name: string, fallback: number, minimum = 1): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(parsed) || parsed < minimum) {
    throw new Error(`${name} must be a whole number, ${minimum} or more; got ${JSON.stringify(value)}`);
  }
  return parsed;
}
