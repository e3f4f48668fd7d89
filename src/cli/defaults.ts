import { availableParallelism } from 'node:os';

/**
 * Settlement loops per process when no flag says otherwise: two per core. A loop spends
 * much of its time waiting on the database (its claim, its batch's COMMIT), so one per
 * core leaves the worker idle between batches; past two per core loops only queue on the
 * hot rows and take CPU from intake. Measured on 2 cores (bench/RESULTS.md, "Fast by
 * default"): 1, 2, 4 and 8 loops settle within 15 % of each other at full load, and
 * more loops settle a paced load with less delay.
 */
export const DEFAULT_SETTLE_CONCURRENCY = Math.max(2, 2 * availableParallelism());
