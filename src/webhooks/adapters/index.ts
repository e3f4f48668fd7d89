import type { ProviderKind } from '../../catalog/providers.js';
import type { WebhookAdapter } from './adapter.js';
import { genericAdapter } from './generic.js';

/** Named adapters register here. */
const ADAPTERS: Partial<Record<ProviderKind, WebhookAdapter>> = {
  generic: genericAdapter,
};

export function adapterFor(kind: ProviderKind): WebhookAdapter | undefined {
  return ADAPTERS[kind];
}
