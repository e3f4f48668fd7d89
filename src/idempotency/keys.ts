import type { Queryable } from '../db/pool.js';

/**
 * The stored answers of Idempotency-Key requests (idempotency_keys): the only SQL on the
 * table. api/idempotency.ts decides what a key means (scope, request hash, sealing) and
 * calls these inside the transaction of the effect; the cleanup duty expires old rows.
 */

/** Who asked for which call, as stored: the row's identity. */
export interface IdempotencyScope {
  /** the row's tenant: the calling tenant's, NO_TENANT for the admin's calls (src/db/distribution.ts) */
  tenantId: string;
  principal: string;
  method: string;
  /** the template filled with the canonical ids it names */
  path: string;
  /** SHA-256 of the Idempotency-Key (hex): the key itself is not stored */
  key: string;
}

export interface StoredAnswer {
  request_hash: Buffer;
  response_status: number;
  response_body: unknown;
}

/**
 * Takes the key's transaction-level advisory lock without waiting: false when a
 * concurrent request with the same key holds it (the caller answers 409 rather than
 * queue behind it).
 */
export async function tryLockIdempotencyKey(tx: Queryable, scope: IdempotencyScope): Promise<boolean> {
  const lock = await tx.query<{ locked: boolean }>(`select pg_try_advisory_xact_lock(hashtextextended($1, 0)) as locked`, [
    JSON.stringify([scope.principal, scope.method, scope.path, scope.key]),
  ]);
  return lock.rows[0]!.locked;
}

/** The first answer given under this key, or null. */
export async function findIdempotentAnswer(db: Queryable, scope: IdempotencyScope): Promise<StoredAnswer | null> {
  const existing = await db.query<StoredAnswer>(
    `select request_hash, response_status, response_body from idempotency_keys
     where tenant_id = $5 and principal = $1 and method = $2 and path = $3 and key = $4`,
    [scope.principal, scope.method, scope.path, scope.key, scope.tenantId],
  );
  return existing.rows[0] ?? null;
}

/** Stores the answer in the transaction of its effect: both commit, or neither. */
export async function insertIdempotentAnswer(
  tx: Queryable,
  row: IdempotencyScope & { route: string; requestHash: Buffer; status: number; body: unknown },
): Promise<void> {
  await tx.query(
    `insert into idempotency_keys (principal, method, route, path, key, request_hash, response_status, response_body, tenant_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [row.principal, row.method, row.route, row.path, row.key, row.requestHash, row.status, JSON.stringify(row.body), row.tenantId],
  );
}

/**
 * Deletes the records older than `days`, except those of the `keptRoutes`: by route, never
 * by a pattern on a path, so a credit's or a grant's record is kept for ever (its ledger
 * key derives from the Idempotency-Key), however its URL was spelled.
 */
export async function deleteExpiredIdempotencyKeys(db: Queryable, days: number, keptRoutes: readonly string[]): Promise<void> {
  await db.query(`delete from idempotency_keys where created_at < now() - make_interval(days => $1) and route <> all($2::text[])`, [
    days,
    keptRoutes,
  ]);
}
