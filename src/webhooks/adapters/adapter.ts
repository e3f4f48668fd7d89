import type { IncomingHttpHeaders } from 'node:http';
import type { CanonicalEvent } from '../canonical-event.js';
import type { UsageSource } from '../usage-source.js';

/**
 * What an adapter reads of a provider's stored settings to verify its webhooks: a part of
 * catalog/'s ProviderRow, named here so webhooks/ need not import the catalog above it.
 */
export interface ProviderCredentials {
  /** Standard Webhooks secrets (whsec_…), any of which may sign */
  secrets: readonly string[];
  /** fal: the JWKS whose Ed25519 keys may sign */
  jwks: { keys: unknown[] } | null;
  /** fal: the operator's fal user id, compared with X-Fal-Webhook-User-Id when set */
  user_id?: string | null;
}

/**
 * One provider's webhook format. Adding a provider is one file implementing this
 * plus its tests (docs/providers/adding-a-provider.md). `receive` verifies
 * authenticity on the raw bytes (throwing invalidSignature) before it reads them,
 * then normalises (throwing invalidPayload).
 */
export interface WebhookAdapter {
  receive(provider: ProviderCredentials, raw: Buffer, headers: IncomingHttpHeaders): CanonicalEvent;
  /** For providers whose webhooks carry no usage: where the worker fetches it (events with fetchUsage). */
  usage?: UsageSource;
}
