import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Pool, PoolClient } from '../db/pool.js';
import { NO_TENANT } from '../db/distribution.js';
import { withSavepoint, withTransaction } from '../db/transaction.js';
import { isUuid } from '../ids.js';
import { findIdempotentAnswer, insertIdempotentAnswer, tryLockIdempotencyKey } from '../idempotency/keys.js';
import { principalKey } from './auth.js';
import { ApiError, errorBody, toApiError } from './errors.js';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from './limits.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** seals stored idempotent answers (server-secret.ts) */
    serverSecret: Buffer;
  }
}

export interface ApiResponse {
  status: number;
  body: unknown;
}

/** Statuses of refusals by validation: they store nothing, so a corrected retry may reuse the key. */
const NOT_STORED = new Set([400, 422]);

/**
 * Runs a creating POST once per Idempotency-Key (scoped to principal, method, route
 * and the canonical ids of what the path names). The key row is written in the same transaction as the effect, so a crash
 * between the effect and the answer leaves either both or neither: a retry replays
 * the first answer or performs the effect, never twice. A concurrent request with
 * the same key holds a transaction-level advisory lock; we answer 409 rather than
 * queue behind it.
 */
export async function runIdempotent(
  pool: Pool,
  request: FastifyRequest,
  reply: FastifyReply,
  options: { required: boolean; /** statuses beyond 400 and 422 that store nothing (an extension's 402) */ notStored?: readonly number[] },
  effect: (tx: PoolClient) => Promise<ApiResponse>,
): Promise<FastifyReply> {
  const key = idempotencyKeyOf(request, options.required);
  if (key === null) {
    const response = await withTransaction(pool, effect);
    return reply.code(response.status).send(response.body);
  }
  const scope = scopeOf(request, key);
  const sealing = sealingKey(request.server.serverSecret, scope, key);
  const requestHash = createHash('sha256')
    .update(canonicalJson(request.body ?? null))
    .digest();
  const outcome = await withTransaction(pool, async (tx) => {
    if (!(await tryLockIdempotencyKey(tx, scope))) {
      throw new ApiError(
        409,
        'idempotency_key_in_use',
        'a request with this Idempotency-Key is still running; retry shortly to get its answer',
      );
    }
    const first = await findIdempotentAnswer(tx, scope);
    if (first) {
      if (!first.request_hash.equals(requestHash)) {
        throw new ApiError(422, 'idempotency_key_reused', 'this Idempotency-Key was used with a different request body; use a new key');
      }
      return { response: { status: first.response_status, body: unseal(first.response_body, sealing, scope, key) }, replayed: true };
    }
    const response = await effectOrStoredError(tx, effect, options.notStored ?? []);
    await insertIdempotentAnswer(tx, { ...scope, requestHash, status: response.status, body: seal(response.body, sealing) });
    return { response, replayed: false };
  });
  if (outcome.replayed) reply.header('Idempotent-Replayed', 'true');
  return reply.code(outcome.response.status).send(outcome.response.body);
}

/** Who asked for which call: the identity of "the same request", whatever the URL's spelling. */
interface Scope {
  /** whose row it is: the calling tenant's, or NO_TENANT for the admin (src/db/distribution.ts) */
  tenantId: string;
  principal: string;
  method: string;
  /** the route's template, e.g. /v1/wallets/:id/credits */
  route: string;
  /** the template filled with the canonical ids it names */
  path: string;
  /** SHA-256 of the Idempotency-Key: the key itself is not stored */
  key: string;
}

function scopeOf(request: FastifyRequest, rawKey: string): Scope {
  const route = request.routeOptions.url;
  if (!route) throw new Error('runIdempotent needs a matched route');
  const principal = request.principal!;
  return {
    tenantId: principal.kind === 'tenant' ? principal.tenantId : NO_TENANT,
    principal: principalKey(principal),
    method: request.method,
    route,
    path: canonicalPath(route, request.params as Record<string, string>),
    key: createHash('sha256').update(rawKey).digest('hex'),
  };
}

/**
 * The route's template with each parameter as Tally stores it: the router has already
 * decoded percent-encoding; UUIDs are stored lower-case, so any letter case names the
 * same object. Re-encoded, so a model name holding "/" stays one segment.
 */
export function canonicalPath(route: string, params: Record<string, string>): string {
  return route.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
    const value = params[name] ?? '';
    return encodeURIComponent(isUuid(value) ? value.toLowerCase() : value);
  });
}

/**
 * The stored answer may hold a secret (a new tenant's api_key, which must otherwise
 * exist only as a hash). The row keeps a SHA-256 of the Idempotency-Key, and the answer
 * is sealed with AES-256-GCM under a key derived from the server's secret (never in the
 * database; see server-secret.ts) and the Idempotency-Key: a database dump alone, even
 * with a guessable key, reveals nothing.
 */
const SEAL_VERSION = 2;

function sealingKey(serverSecret: Buffer, scope: Scope, rawKey: string): Buffer {
  return createHmac('sha256', serverSecret)
    .update(JSON.stringify(['tally-idempotency-v2', scope.principal, scope.method, scope.path, rawKey]))
    .digest();
}

/** Answers sealed before version 2 used a key derived from the Idempotency-Key alone. */
function legacySealingKey(scope: Scope, rawKey: string): Buffer {
  return createHash('sha256')
    .update(JSON.stringify(['tally-idempotency-v1', scope.principal, scope.method, scope.path, rawKey]))
    .digest();
}

interface Sealed {
  v?: number;
  sealed: string;
}

function seal(body: unknown, key: Buffer): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(JSON.stringify(body), 'utf8'), cipher.final()]);
  return { v: SEAL_VERSION, sealed: Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64') };
}

function unseal(stored: unknown, key: Buffer, scope: Scope, rawKey: string): unknown {
  const { v, sealed } = stored as Sealed;
  const packed = Buffer.from(sealed, 'base64');
  try {
    const decipher = createDecipheriv('aes-256-gcm', v === SEAL_VERSION ? key : legacySealingKey(scope, rawKey), packed.subarray(0, 12));
    decipher.setAuthTag(packed.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(packed.subarray(28)), decipher.final()]).toString('utf8'));
  } catch {
    // The answer exists (the effect happened once) but was sealed under another server
    // secret: refusing is the only answer that neither repeats the effect nor lies.
    throw new ApiError(
      409,
      'idempotency_replay_unavailable',
      'this Idempotency-Key was already used, but its first answer was sealed with another server secret: give every tally serve the same TALLY_SECRET_KEY',
    );
  }
}

/**
 * A refusal that is not validation (402 insufficient funds, 404, 409) is part of the
 * key's history: its effect is rolled back to a savepoint and the answer stored.
 */
async function effectOrStoredError(
  tx: PoolClient,
  effect: (tx: PoolClient) => Promise<ApiResponse>,
  notStored: readonly number[],
): Promise<ApiResponse> {
  try {
    return await withSavepoint(tx, 'idempotent_effect', () => effect(tx));
  } catch (error) {
    const api = toApiError(error);
    if (!api || api.status >= 500 || NOT_STORED.has(api.status) || notStored.includes(api.status)) throw error;
    return { status: api.status, body: errorBody(api.code, api.message) };
  }
}

/** The request's Idempotency-Key, checked (400 when malformed, or missing where required). */
export function idempotencyKeyOf(request: FastifyRequest, required: boolean): string | null {
  const header = request.headers['idempotency-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined || key === '') {
    if (required)
      throw new ApiError(
        400,
        'idempotency_key_required',
        `this call requires an Idempotency-Key header (any unique string up to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters)`,
        'Idempotency-Key',
      );
    return null;
  }
  if (key.length > IDEMPOTENCY_KEY_MAX_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw new ApiError(
      400,
      'invalid_idempotency_key',
      `an Idempotency-Key is 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters without spaces`,
      'Idempotency-Key',
    );
  }
  return key;
}

/** JSON with object keys sorted, so the same request hashes the same however it is serialised. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/**
 * A credit's ledger key: the wallet as stored and the Idempotency-Key, so however the
 * URL is spelled and whatever happened to the idempotency record, one key, one credit.
 * (The same value earlier versions derived from the canonical path, so credits made
 * before this change keep their keys.)
 */
export function creditKeyOf(request: FastifyRequest, walletId: string): string {
  return ledgerKeyOf(request, `/v1/wallets/${walletId}/credits`);
}

/**
 * A grant's key (grants.grant_key, and the settlement key of its activation): the tenant,
 * then a digest of the principal, the wallet as stored and the Idempotency-Key, as for a
 * credit. One key, one grant, whenever and however the call is retried.
 */
export function grantKeyOf(request: FastifyRequest, wallet: { id: string; tenant_id: string }): string {
  return `${wallet.tenant_id}:grant:${ledgerKeyOf(request, `/v1/wallets/${wallet.id}/grants`)}`;
}

function ledgerKeyOf(request: FastifyRequest, path: string): string {
  const header = request.headers['idempotency-key'];
  const key = Array.isArray(header) ? header[0] : header;
  return createHash('sha256')
    .update(JSON.stringify([principalKey(request.principal!), path, key ?? '']))
    .digest('hex')
    .slice(0, 32);
}
