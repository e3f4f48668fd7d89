import type { ProviderKind } from '../../catalog/providers.js';
import type { WebhookAdapter } from './adapter.js';
import { falAdapter } from './fal.js';
import { genericAdapter } from './generic.js';
import { openaiAdapter } from './openai.js';
import { replicateAdapter } from './replicate.js';

/** Named adapters register here (docs/providers/adding-a-provider.md). */
const ADAPTERS: Record<ProviderKind, WebhookAdapter> = {
  generic: genericAdapter,
  replicate: replicateAdapter,
  openai: openaiAdapter,
  fal: falAdapter,
};

export function adapterFor(kind: ProviderKind): WebhookAdapter | undefined {
  return ADAPTERS[kind];
}
