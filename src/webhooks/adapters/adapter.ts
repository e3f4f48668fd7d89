import type { IncomingHttpHeaders } from 'node:http';
import type { ProviderRow } from '../../catalog/providers.js';
import type { CanonicalEvent } from '../canonical-event.js';
import type { UsageSource } from '../usage-source.js';

/**
 * One provider's webhook format. Adding a provider is one file implementing this
 * plus its tests (docs/providers/adding-a-provider.md). `receive` verifies
 * authenticity on the raw bytes (throwing invalidSignature) before it reads them,
 * then normalises (throwing invalidPayload).
 */
export interface WebhookAdapter {
  receive(provider: ProviderRow, raw: Buffer, headers: IncomingHttpHeaders): CanonicalEvent;
  /** For providers whose webhooks carry no usage: where the worker fetches it (events with fetchUsage). */
  usage?: UsageSource;
}
