/**
 * The fuzz suite's knobs: a fixed seed by default (printed, so a red run can be
 * repeated), FUZZ_SEED and FUZZ_RUNS to explore further.
 */
export const FUZZ_SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 20_261_202;
/** total generated cases across the suite (in-process share and real-HTTP share) */
export const FUZZ_RUNS = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : 10_400;
/** the share of FUZZ_RUNS sent over real HTTP to a spawned `tally serve` */
export const HTTP_SHARE = 0.05;

if (!Number.isSafeInteger(FUZZ_SEED) || !Number.isSafeInteger(FUZZ_RUNS) || FUZZ_RUNS < 1) {
  throw new Error('FUZZ_SEED and FUZZ_RUNS must be integers (FUZZ_RUNS ≥ 1)');
}

/** Splits a number of cases over the routes: intake gets the largest share, costly runs a small one. */
export function mixOf(total: number, routes: number) {
  const webhooks = Math.round(total * 0.3);
  const reconciliationRuns = Math.max(1, Math.round(total * 0.012));
  const perRoute = Math.max(1, Math.floor((total - webhooks - reconciliationRuns) / routes));
  return { perRoute, webhooks, reconciliationRuns };
}
