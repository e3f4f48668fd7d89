import { availableParallelism } from 'node:os';

/**
 * Settlement loops per process when no flag says otherwise: two per core. A loop spends
 * most of its time waiting on the database (its claim, its batch's COMMIT), so one per
 * core leaves cores idle; more than two per core only queue on the hot rows and take CPU
 * from intake (bench/RESULTS.md, "Fast by default", measures 1, 2, 4 and 8 per core).
 */
export const DEFAULT_SETTLE_CONCURRENCY = Math.max(2, 2 * availableParallelism());
