/**
 * Seconds as a provider reports them (a JSON number, e.g. Replicate's
 * `metrics.predict_time`, fal's `metrics.inference_time`) → whole milliseconds,
 * rounded half-up. Exact: the number is read from its shortest decimal form
 * (`String(n)`, the form JSON.parse round-trips) and shifted by three digits as text,
 * so 4.0005 s is 4001 ms — multiplying the double by 1000 gives 4000.4999999999995 → 4000.
 */
export class InvalidDurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidDurationError';
  }
}

/** The decimal forms String(number) produces for finite non-negative numbers. */
const DECIMAL = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/;

export function secondsToMilliseconds(seconds: unknown, field: string): number {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) {
    throw new InvalidDurationError(`${field} must be a finite number of seconds, got ${JSON.stringify(seconds) ?? String(seconds)}`);
  }
  if (seconds < 0) throw new InvalidDurationError(`${field} must not be negative, got ${String(seconds)}`);
  const match = DECIMAL.exec(String(seconds)); // -0 prints as "0"
  if (!match) throw new InvalidDurationError(`${field}: cannot read ${String(seconds)} as a decimal`);
  const [, whole, fraction = '', exponent = '0'] = match;
  // value = digits × 10^(shift − fraction length); milliseconds shift it by 3 more.
  const digits = BigInt(whole! + fraction);
  const scale = Number(exponent) + 3 - fraction.length;
  const millis = scale >= 0 ? digits * 10n ** BigInt(scale) : roundHalfUp(digits, 10n ** BigInt(-scale));
  if (millis > BigInt(Number.MAX_SAFE_INTEGER)) throw new InvalidDurationError(`${field} is too large: ${String(seconds)} s`);
  return Number(millis);
}

function roundHalfUp(numerator: bigint, denominator: bigint): bigint {
  const quotient = numerator / denominator;
  return (numerator % denominator) * 2n >= denominator ? quotient + 1n : quotient;
}
