/**
 * Items split into runs of one tenant each, in their order: a statement per run names one
 * tenant (so on Citus it routes to that tenant's shard: docs/operations/scaling.md), and
 * a batch of one tenant — every settlement batch is (queue/events-table.ts) — stays one
 * statement. Consecutive runs only: the order items came in (a lock order) is kept.
 * Items whose tenant is unknown (undefined) form runs of their own.
 */
export function tenantRuns<T>(
  items: readonly T[],
  tenantOf: (item: T) => string | undefined,
): { tenantId: string | undefined; items: T[] }[] {
  const runs: { tenantId: string | undefined; items: T[] }[] = [];
  for (const item of items) {
    const tenantId = tenantOf(item);
    const last = runs.at(-1);
    if (last && last.tenantId === tenantId) last.items.push(item);
    else runs.push({ tenantId, items: [item] });
  }
  return runs;
}
