import type { Pool } from '../db/pool.js';
import type { Metrics } from './metrics.js';

/** What every route module needs. */
export interface ApiContext {
  pool: Pool;
  metrics: Metrics;
}
