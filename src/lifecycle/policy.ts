/**
 * Per-provider choices the lifecycle table leaves open (CONTRACT "Job states
 * and events", provider `policies`). Stored and sent as snake_case JSON;
 * camelCase inside.
 */
export interface ProviderPolicy {
  /** On job.failed: void the hold, or charge the usage the provider reported. */
  readonly failedWithUsage: 'release' | 'capture';
  /** How long a cancel_requested job waits for the provider before its hold is released. */
  readonly cancelGraceSeconds: number;
  /** How long a hold may stay open with no terminal event before it is flagged. */
  readonly holdTtlSeconds: number;
}

export interface ProviderPolicyJson {
  readonly failed_with_usage: 'release' | 'capture';
  readonly cancel_grace_seconds: number;
  readonly hold_ttl_seconds: number;
}

/** Releasing on failure is the default: a tenant is not charged for failed work unless the provider's terms say so. */
export const DEFAULT_POLICY: ProviderPolicy = Object.freeze({
  failedWithUsage: 'release',
  cancelGraceSeconds: 300,
  holdTtlSeconds: 86_400,
});

export class InvalidPolicyError extends Error {
  readonly code = 'invalid_policy';

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidPolicyError';
  }
}

const POLICY_KEYS: readonly string[] = ['failed_with_usage', 'cancel_grace_seconds', 'hold_ttl_seconds'];

/**
 * Validates `policies` JSON and fills omitted keys from DEFAULT_POLICY.
 * `undefined` or `null` (no policies given) means all defaults. An unknown key
 * is refused rather than ignored: it is almost always a misspelt policy that
 * the operator believes is in force.
 */
export function parsePolicy(input: unknown): ProviderPolicy {
  if (input === undefined || input === null) return DEFAULT_POLICY;
  if (typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidPolicyError('policies must be an object such as {"failed_with_usage": "release"}');
  }
  const unknown = Object.keys(input).filter((key) => !POLICY_KEYS.includes(key));
  if (unknown.length > 0) {
    throw new InvalidPolicyError(`unknown policies ${unknown.join(', ')}; known: ${POLICY_KEYS.join(', ')}`);
  }
  const raw = input as Record<string, unknown>;
  return Object.freeze({
    failedWithUsage: failedWithUsage(raw['failed_with_usage']),
    cancelGraceSeconds: seconds(raw, 'cancel_grace_seconds', DEFAULT_POLICY.cancelGraceSeconds),
    holdTtlSeconds: seconds(raw, 'hold_ttl_seconds', DEFAULT_POLICY.holdTtlSeconds),
  });
}

export function policyToJson(policy: ProviderPolicy): ProviderPolicyJson {
  return {
    failed_with_usage: policy.failedWithUsage,
    cancel_grace_seconds: policy.cancelGraceSeconds,
    hold_ttl_seconds: policy.holdTtlSeconds,
  };
}

function failedWithUsage(value: unknown): ProviderPolicy['failedWithUsage'] {
  if (value === undefined) return DEFAULT_POLICY.failedWithUsage;
  if (value === 'release' || value === 'capture') return value;
  throw new InvalidPolicyError(`failed_with_usage must be "release" or "capture", got ${JSON.stringify(value)}`);
}

function seconds(raw: Record<string, unknown>, key: string, fallback: number): number {
  const value = raw[key];
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  throw new InvalidPolicyError(`${key} must be a positive whole number of seconds, got ${JSON.stringify(value)}`);
}
