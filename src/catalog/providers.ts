import { Webhook } from 'standardwebhooks';
import { importEd25519 } from '../webhooks/adapters/fal.js';
import type { ProviderKind } from '../webhooks/adapters/index.js';
import type { Queryable } from '../db/pool.js';
import { parsePolicy, policyToJson, type ProviderPolicy } from '../lifecycle/index.js';
import { openProviderSecrets, sealProviderSecrets } from './provider-secrets.js';

export interface ProviderRow {
  name: string;
  kind: ProviderKind;
  /**
   * The signing secrets. As stored (findProvider, the lists: each sealed, or clear when
   * written before migration 0027 and not sealed yet, provider-secrets.ts); opened, the
   * secrets themselves, in the rows the lookups hand intake (provider-cache.ts) and in
   * what insertProvider and updateProvider return.
   */
  secrets: string[];
  jwks: { keys: unknown[] } | null;
  api_key: string | null;
  base_url: string | null;
  /**
   * fal only: the operator's fal user id, compared with X-Fal-Webhook-User-Id. Always
   * read from the database (null when unset); optional in the type so rows built by
   * hand for other kinds need not name it.
   */
  user_id?: string | null;
  policies: unknown;
  created_at: Date;
  updated_at: Date;
}

export interface ProviderSettings {
  secrets?: string[];
  jwks?: { keys: unknown[] } | null;
  api_key?: string | null;
  base_url?: string | null;
  user_id?: string | null;
  policies?: unknown;
}

export class InvalidProviderSettings extends Error {
  readonly code: string = 'invalid_provider_settings';
}

/** CONTRACT.md: a secret that is not `whsec_` + base64 is 400 `invalid_secret`. */
export class InvalidSecret extends InvalidProviderSettings {
  override readonly code = 'invalid_secret';
}

/**
 * `whsec_` then standard base64 (A-Z a-z 0-9 + /, padded to a multiple of 4), nothing
 * else. Stricter than the `standardwebhooks` package, which also takes a secret without
 * the prefix and ignores a trailing newline: a secret pasted wrongly would be stored,
 * verify nothing and look configured.
 */
const STANDARD_WEBHOOKS_SECRET = /^whsec_(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function validateSecret(secret: string, index: number): void {
  const problem = () =>
    new InvalidSecret(`secrets[${index}] is not a Standard Webhooks secret: expected "whsec_" followed by base64 (A-Z, a-z, 0-9, + and /, padded with =)`);
  if (!STANDARD_WEBHOOKS_SECRET.test(secret) || secret.length === 'whsec_'.length) throw problem();
  try {
    new Webhook(secret); // and what the verifying package requires: a non-empty key
  } catch {
    throw problem();
  }
}

/** Which settings each kind needs (CONTRACT.md "Named provider adapters"). */
const REQUIRED: Record<ProviderKind, (keyof ProviderSettings)[]> = {
  generic: ['secrets'],
  replicate: ['secrets'],
  openai: ['secrets', 'api_key'],
  fal: ['jwks', 'api_key'],
};

/**
 * Which settings each kind reads; any other is refused rather than stored and ignored
 * (a fal provider given `secrets` would otherwise look configured and verify nothing).
 */
const USED: Record<ProviderKind, (keyof ProviderSettings)[]> = {
  generic: ['secrets', 'policies'],
  replicate: ['secrets', 'policies'],
  openai: ['secrets', 'api_key', 'base_url', 'policies'],
  fal: ['jwks', 'api_key', 'base_url', 'user_id', 'policies'],
};

const isSet = (value: unknown) => value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0);

/** Checks settings as they will be after a create or patch; returns the parsed policy. */
/**
 * `alreadyStored`: secrets the provider has now. They were accepted by an earlier, looser
 * check and are kept as they are: a PATCH of policies, or a rotation sending
 * `[new, old]`, must not be refused for an old secret (only new entries are checked).
 */
export function validateProviderSettings(kind: ProviderKind, settings: ProviderSettings, alreadyStored: readonly string[] = []): ProviderPolicy {
  for (const field of REQUIRED[kind]) {
    if (!isSet(settings[field])) throw new InvalidProviderSettings(`a ${kind} provider needs ${field}`);
  }
  for (const field of ['secrets', 'jwks', 'api_key', 'base_url', 'user_id'] as const) {
    if (isSet(settings[field]) && !USED[kind].includes(field)) {
      throw new InvalidProviderSettings(`a ${kind} provider does not use ${field}; it takes ${USED[kind].join(', ')}`);
    }
  }
  (settings.secrets ?? []).forEach((secret, index) => {
    if (!alreadyStored.includes(secret)) validateSecret(secret, index);
  });
  if (isSet(settings.base_url)) validateBaseUrl(settings.base_url!);
  if (settings.user_id !== undefined && settings.user_id !== null && !FAL_USER_ID.test(settings.user_id)) {
    throw new InvalidProviderSettings('user_id must be your fal user id: 1 to 200 printable characters, no spaces');
  }
  if (isSet(settings.jwks)) validateJwks(settings.jwks!);
  return parsePolicy(settings.policies);
}

/** As in migrations/0006_provider_user_id.sql: printable ASCII, no spaces. */
const FAL_USER_ID = /^[!-~]{1,200}$/;

/**
 * fal signs every customer's webhooks with the same keys, so without user_id a fal
 * provider takes webhooks fal signed for anyone's account (docs/providers/fal.md).
 */
export function missesFalUserId(row: ProviderRow): boolean {
  return row.kind === 'fal' && !row.user_id;
}

/** Where the worker fetches usage: http(s), and nothing in it that could leak into a log. */
function validateBaseUrl(baseUrl: string): void {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new InvalidProviderSettings('base_url must be an absolute http(s) URL such as "https://api.openai.com"');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidProviderSettings('base_url must be http or https');
  if (url.username || url.password)
    throw new InvalidProviderSettings('base_url must not carry credentials; the api_key setting is sent as a header');
  if (url.search || url.hash) throw new InvalidProviderSettings('base_url must not have a query or fragment');
}

/** fal's public keys: every key an Ed25519 public JWK ({kty: "OKP", crv: "Ed25519", x}) that imports. */
function validateJwks(jwks: { keys: unknown[] }): void {
  if (typeof jwks !== 'object' || !Array.isArray(jwks.keys) || jwks.keys.length === 0) {
    throw new InvalidProviderSettings('jwks must be {"keys": [...]} with at least one key');
  }
  jwks.keys.forEach((jwk, index) => {
    if (typeof jwk === 'object' && jwk !== null && 'd' in jwk) {
      throw new InvalidProviderSettings(`jwks.keys[${index}] is a private key; give the public key only (without "d")`);
    }
    if (!importEd25519(jwk)) {
      throw new InvalidProviderSettings(
        `jwks.keys[${index}] is not an Ed25519 public key: expected {"kty": "OKP", "crv": "Ed25519", "x": "<base64url>"}`,
      );
    }
  });
}

/** `serverSecret` seals the secrets (provider-secrets.ts); the row returned holds them opened. */
export async function insertProvider(
  tx: Queryable,
  name: string,
  kind: ProviderKind,
  settings: ProviderSettings,
  serverSecret: Buffer,
): Promise<ProviderRow> {
  const policy = validateProviderSettings(kind, settings);
  const result = await tx.query<ProviderRow>(
    `insert into providers (name, kind, secrets, jwks, api_key, base_url, user_id, policies)
     values ($1, $2, $3, $4, $5, $6, $7, $8) returning *`,
    [
      name,
      kind,
      sealProviderSecrets(settings.secrets ?? [], serverSecret),
      settings.jwks ?? null,
      settings.api_key ?? null,
      settings.base_url ?? null,
      settings.user_id ?? null,
      JSON.stringify(policyToJson(policy)),
    ],
  );
  return openProviderSecrets(result.rows[0]!, serverSecret);
}

/**
 * Replaces the given settings; rotation sends the new secret with the old one, then drops
 * the old later. The secrets kept are compared opened, and all of them are written sealed
 * again (one written in the clear before 0027 too).
 */
export async function updateProvider(tx: Queryable, name: string, patch: ProviderSettings, serverSecret: Buffer): Promise<ProviderRow | null> {
  const current = await tx.query<ProviderRow>('select * from providers where name = $1 for update', [name]);
  const stored = current.rows[0];
  if (!stored) return null;
  const row = openProviderSecrets(stored, serverSecret);
  const merged: ProviderSettings = {
    secrets: patch.secrets ?? row.secrets,
    jwks: patch.jwks !== undefined ? patch.jwks : row.jwks,
    api_key: patch.api_key !== undefined ? patch.api_key : row.api_key,
    base_url: patch.base_url !== undefined ? patch.base_url : row.base_url,
    user_id: patch.user_id !== undefined ? patch.user_id : row.user_id,
    policies: patch.policies !== undefined ? { ...(row.policies as object), ...(patch.policies as object) } : row.policies,
  };
  const policy = validateProviderSettings(row.kind, merged, row.secrets);
  const result = await tx.query<ProviderRow>(
    `update providers set secrets = $2, jwks = $3, api_key = $4, base_url = $5, user_id = $6, policies = $7, updated_at = now()
     where name = $1 returning *`,
    [
      name,
      sealProviderSecrets(merged.secrets ?? [], serverSecret),
      merged.jwks ?? null,
      merged.api_key ?? null,
      merged.base_url ?? null,
      merged.user_id ?? null,
      JSON.stringify(policyToJson(policy)),
    ],
  );
  return openProviderSecrets(result.rows[0]!, serverSecret);
}

/** The row as stored: its secrets sealed (openProviderSecrets opens them). */
export async function findProvider(db: Queryable, name: string): Promise<ProviderRow | null> {
  const result = await db.query<ProviderRow>({ name: 'find_provider', text: 'select * from providers where name = $1', values: [name] });
  return result.rows[0] ?? null;
}
