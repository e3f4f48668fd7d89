import type { PriceBook, Usage } from '../../src/pricing/index.js';
import { DEFAULT_POLICY, type ProviderPolicy } from '../../src/lifecycle/index.js';

/** One price book, tenant, job and reservation that the pure lifecycle tests decide on. */
export const BOOK: PriceBook = {
  id: 'pb_1',
  model: 'm1',
  currency: 'USD',
  version: 1,
  unitPrices: { input_tokens: 1_000_000n, output_tokens: 2_500_000n },
};
export const TENANT = '018f0000-0000-7000-8000-000000000001';
export const JOB = '018f0000-0000-7000-8000-000000000002';
export const RESERVED = 10_000n;
export const USAGE: Usage = { input_tokens: 1000, output_tokens: 400 }; // 1000 + 1000 = 2000 micros
export const CAPTURE_POLICY: ProviderPolicy = { ...DEFAULT_POLICY, failedWithUsage: 'capture' };
