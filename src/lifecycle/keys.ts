/**
 * The grammar of every ledger key: the one place that formats and parses the values of
 * the `settlement_key` columns. Three kinds share those columns:
 *
 * - a settlement (charge) key names one financial effect of a job:
 *   `{tenant}:{job}:{charge_type}:{version}` (CONTRACT "Settlement keys"). Capture and
 *   release share version 1 because a job has one hold, resolved once; an adjustment's
 *   version is the provider's correction number;
 * - a hold key names the job's reservation: `{tenant}:{job}:reserve:1`;
 * - a credit key names one top-up: `{tenant}:credit:{idempotency key}`, where the key is
 *   the credit's stable key (a digest of its Idempotency-Key, see api/idempotency.ts).
 *
 * The database's UNIQUE constraints on these keys turn a repeat of the same effect into
 * "return the first result", so a key must have exactly one spelling: every formatter
 * refuses what the parser could not read back, and the parser refuses every string the
 * formatters would not produce. Keys already stored depend on these spellings: they
 * never change.
 */
export type ChargeType = 'capture' | 'release' | 'adjustment';

export const CHARGE_TYPES: readonly ChargeType[] = ['capture', 'release', 'adjustment'];

export interface SettlementKeyParts {
  readonly tenantId: string;
  readonly jobId: string;
  readonly chargeType: ChargeType;
  readonly version: number;
}

export type LedgerKey =
  | ({ readonly kind: 'settlement' } & SettlementKeyParts)
  | { readonly kind: 'hold'; readonly tenantId: string; readonly jobId: string }
  | { readonly kind: 'extension'; readonly tenantId: string; readonly jobId: string; readonly version: number }
  | { readonly kind: 'credit'; readonly tenantId: string; readonly idempotencyKey: string };

export class InvalidSettlementKeyError extends Error {
  readonly code = 'invalid_settlement_key';

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidSettlementKeyError';
  }
}

/** The word in a credit key's second place; no job may be called that, or keys would collide. */
const CREDIT_WORD = 'credit';
/** The word in a hold key's charge place; a hold, like capture and release, has version 1. */
const HOLD_WORD = 'reserve';
/** The word in an extension key's charge place. */
const EXTENSION_WORD = 'extension';

export function settlementKey(
  tenantId: string,
  jobId: string,
  chargeType: ChargeType,
  version: number,
): string {
  assertIdPart('tenant id', tenantId);
  assertJobId(jobId);
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

/**
 * The key of a job's Nth extension of its hold (CONTRACT.md "Settlement keys"): its
 * reserve entries and its record (job_extensions) carry it. N counts from 1 in commit order.
 */
export function extensionKey(tenantId: string, jobId: string, version: number): string {
  assertIdPart('tenant id', tenantId);
  assertJobId(jobId);
  if (!Number.isSafeInteger(version) || version < 1) {
    throw new InvalidSettlementKeyError(`extension number must be a positive integer, got ${version}`);
  }
  return `${tenantId}:${jobId}:${EXTENSION_WORD}:${version}`;
}

/** The key of a job's reservation (its pending transfer). */
export function holdKey(tenantId: string, jobId: string): string {
  assertIdPart('tenant id', tenantId);
  assertJobId(jobId);
  return `${tenantId}:${jobId}:${HOLD_WORD}:1`;
}

/**
 * The key of a top-up. The idempotency key may contain ":" (the tenant id never does,
 * and no job is called "credit", so the key still parses one way only); it is printable
 * ASCII without spaces, like the Idempotency-Key header it is derived from.
 */
export function creditKey(tenantId: string, idempotencyKey: string): string {
  assertIdPart('tenant id', tenantId);
  if (typeof idempotencyKey !== 'string' || !/^[\x21-\x7e]+$/.test(idempotencyKey)) {
    throw new InvalidSettlementKeyError(
      `credit key ${JSON.stringify(idempotencyKey)} must be 1 or more printable ASCII characters without spaces`,
    );
  }
  return `${tenantId}:${CREDIT_WORD}:${idempotencyKey}`;
}

export function formatLedgerKey(key: LedgerKey): string {
  switch (key.kind) {
    case 'settlement':
      return settlementKey(key.tenantId, key.jobId, key.chargeType, key.version);
    case 'hold':
      return holdKey(key.tenantId, key.jobId);
    case 'extension':
      return extensionKey(key.tenantId, key.jobId, key.version);
    case 'credit':
      return creditKey(key.tenantId, key.idempotencyKey);
  }
}

/** The inverse of the three formatters; refuses anything they would not produce. */
export function parseLedgerKey(key: string): LedgerKey {
  const parsed = readParts(key);
  // Formatting again validates every part; comparing rejects non-canonical spellings.
  if (formatLedgerKey(parsed) !== key) throw notAKey(key);
  return parsed;
}

/**
 * The parser of charge keys, `{tenant}:{job}:{charge_type}:{version}`, the settlements
 * table's keys: a hold or credit key is refused here.
 */
export function parseSettlementKey(key: string): SettlementKeyParts {
  const parsed = parseLedgerKey(key);
  if (parsed.kind !== 'settlement') {
    throw new InvalidSettlementKeyError(
      `settlement key ${JSON.stringify(key)} is not {tenant}:{job}:{charge_type}:{version} (it is a ${parsed.kind} key)`,
    );
  }
  const { tenantId, jobId, chargeType, version } = parsed;
  return { tenantId, jobId, chargeType, version };
}

/** Splits a key by its shape; parseLedgerKey then checks it is the canonical spelling. */
function readParts(key: string): LedgerKey {
  const parts = typeof key === 'string' ? key.split(':') : [];
  const [tenantId = '', second = '', third = '', fourth = ''] = parts;
  if (parts.length >= 3 && second === CREDIT_WORD) {
    return { kind: 'credit', tenantId, idempotencyKey: parts.slice(2).join(':') };
  }
  if (parts.length !== 4 || !/^[1-9][0-9]*$/.test(fourth)) throw notAKey(key);
  if (third === HOLD_WORD) return { kind: 'hold', tenantId, jobId: second };
  if (third === EXTENSION_WORD) return { kind: 'extension', tenantId, jobId: second, version: Number(fourth) };
  return { kind: 'settlement', tenantId, jobId: second, chargeType: third as ChargeType, version: Number(fourth) };
}

function notAKey(key: string): InvalidSettlementKeyError {
  return new InvalidSettlementKeyError(
    `ledger key ${JSON.stringify(key)} is none of {tenant}:{job}:{charge_type}:{version}, {tenant}:{job}:reserve:1, {tenant}:{job}:extension:{N}, {tenant}:credit:{key}`,
  );
}

/** Ids are UUIDs in practice; all the key needs is that they be non-empty and colon-free. */
function assertIdPart(what: string, value: string): void {
  if (typeof value !== 'string' || value === '' || value.includes(':')) {
    throw new InvalidSettlementKeyError(`${what} ${JSON.stringify(value)} must be non-empty and contain no ":"`);
  }
}

/** Job ids are UUIDs; "credit" in the job's place would read as a credit key. */
function assertJobId(jobId: string): void {
  assertIdPart('job id', jobId);
  if (jobId === CREDIT_WORD) throw new InvalidSettlementKeyError(`job id ${JSON.stringify(jobId)} is reserved for credit keys`);
}
