/**
 * Usage: integer counts per dimension ("input_tokens": 1200). Counts are JSON
 * numbers, so they are only exact up to Number.MAX_SAFE_INTEGER; anything
 * beyond, or fractional, could silently round and is refused.
 */
export type Usage = Readonly<Record<string, number>>;

export class InvalidUsageError extends Error {
  readonly code = 'invalid_usage';

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidUsageError';
  }
}

/**
 * Returns a fresh frozen copy, so a caller holding the input cannot change
 * what was priced. Object.fromEntries defines own properties, so a dimension
 * named "__proto__" stays data and never touches the prototype.
 */
export function validateUsage(input: unknown): Usage {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new InvalidUsageError('usage must be an object of dimension → non-negative integer');
  }
  const prototype: unknown = Object.getPrototypeOf(input);
  if (prototype !== Object.prototype && prototype !== null) {
    throw new InvalidUsageError('usage must be a plain object');
  }
  const entries = Object.entries(input).map(([dimension, units]) => {
    assertUnits(dimension, units);
    return [dimension, units === 0 ? 0 : units] as const; // -0 → 0
  });
  return Object.freeze(Object.fromEntries(entries));
}

function assertUnits(dimension: string, units: unknown): asserts units is number {
  if (dimension === '') throw new InvalidUsageError('usage dimension names must not be empty');
  if (typeof units !== 'number' || !Number.isSafeInteger(units) || units < 0) {
    throw new InvalidUsageError(
      `usage ${JSON.stringify(dimension)} must be a non-negative safe integer, got ${String(units)}`,
    );
  }
}
