/**
 * Settlement keys name one financial effect: `{tenant}:{job}:{charge_type}:{version}`
 * (CONTRACT "Settlement keys"). The database's UNIQUE constraint on the key
 * turns a repeat of the same effect into "return the first result". Capture
 * and release share version 1 because a job has one hold, resolved once; an
 * adjustment's version is the provider's correction number.
 */
export type ChargeType = 'capture' | 'release' | 'adjustment';

export const CHARGE_TYPES: readonly ChargeType[] = ['capture', 'release', 'adjustment'];

export interface SettlementKeyParts {
  readonly tenantId: string;
  readonly jobId: string;
  readonly chargeType: ChargeType;
  readonly version: number;
}

export class InvalidSettlementKeyError extends Error {
  readonly code = 'invalid_settlement_key';

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidSettlementKeyError';
  }
}

export function settlementKey(
  tenantId: string,
  jobId: string,
  chargeType: ChargeType,
  version: number,
): string {
  assertIdPart('tenant id', tenantId);
  assertIdPart('job id', jobId);
  if (!CHARGE_TYPES.includes(chargeType)) {
    throw new InvalidSettlementKeyError(`unknown charge type ${JSON.stringify(chargeType)}`);
  }
  if (!Number.isSafeInteger(version) || version < 1) {
    throw new InvalidSettlementKeyError(`settlement version must be a positive integer, got ${version}`);
  }
  if (chargeType !== 'adjustment' && version !== 1) {
    throw new InvalidSettlementKeyError(`${chargeType} always has version 1: a job has one hold`);
  }
  return `${tenantId}:${jobId}:${chargeType}:${version}`;
}

/** The inverse of settlementKey; refuses anything settlementKey would not produce. */
export function parseSettlementKey(key: string): SettlementKeyParts {
  const parts = key.split(':');
  const [tenantId = '', jobId = '', chargeType = '', versionText = ''] = parts;
  if (parts.length !== 4 || !/^[1-9][0-9]*$/.test(versionText)) {
    throw new InvalidSettlementKeyError(
      `settlement key ${JSON.stringify(key)} is not {tenant}:{job}:{charge_type}:{version}`,
    );
  }
  const version = Number(versionText);
  // Composing again validates every part and rejects non-canonical spellings.
  settlementKey(tenantId, jobId, chargeType as ChargeType, version);
  return { tenantId, jobId, chargeType: chargeType as ChargeType, version };
}

/** Ids are UUIDs in practice; all the key needs is that they be non-empty and colon-free. */
function assertIdPart(what: string, value: string): void {
  if (typeof value !== 'string' || value === '' || value.includes(':')) {
    throw new InvalidSettlementKeyError(`${what} ${JSON.stringify(value)} must be non-empty and contain no ":"`);
  }
}
