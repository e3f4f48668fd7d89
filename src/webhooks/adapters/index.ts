import type { WebhookAdapter } from './adapter.js';
import { falAdapter } from './fal.js';
import { genericAdapter } from './generic.js';
import { openaiAdapter } from './openai.js';
import { replicateAdapter } from './replicate.js';

/**
 * Named adapters register here (docs/providers/adding-a-provider.md). The kinds of provider
 * are this table's keys: a kind exists because an adapter reads its webhooks.
 */
const ADAPTERS = {
  generic: genericAdapter,
  replicate: replicateAdapter,
  openai: openaiAdapter,
  fal: falAdapter,
} satisfies Record<string, WebhookAdapter>;

export type ProviderKind = keyof typeof ADAPTERS;
export const PROVIDER_KINDS = Object.keys(ADAPTERS) as readonly ProviderKind[];

export function adapterFor(kind: ProviderKind): WebhookAdapter | undefined {
  return ADAPTERS[kind];
}
