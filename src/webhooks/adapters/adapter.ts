import type { IncomingHttpHeaders } from 'node:http';
import type { ProviderRow } from '../../catalog/providers.js';
import type { CanonicalEvent } from '../canonical-event.js';

/**
 * One provider's webhook format. Adding a provider is one file implementing this
 * plus its tests. `receive` verifies authenticity on the raw bytes (throwing
 * invalidSignature) before it reads them, then normalises (throwing invalidPayload).
 */
export interface WebhookAdapter {
  receive(provider: ProviderRow, raw: Buffer, headers: IncomingHttpHeaders): CanonicalEvent;
}
