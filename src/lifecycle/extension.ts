import type { Usage } from '../pricing/index.js';

/**
 * How a job's limits grow while it runs (docs/CONTRACT.md, "Long-running jobs: hold
 * extensions", automatic extension). Pure: the shell prices the limits it returns at the
 * job's pinned version and holds the difference as one extension, in the transaction that
 * settles the event that reported the usage.
 */

/** The tenant's rule for a job: grow by whole `step`s, never beyond `maxLimits`. */
export interface AutoExtend {
  readonly step: Usage;
  readonly maxLimits: Usage;
}

/**
 * Where the job is when its usage is checked: still working (`reserved`, `running`,
 * `usage_pending`: one step of headroom is kept), `cancel_requested` (no headroom), or a
 * terminal event that captures, with the usage it bills.
 */
export type ExtensionPhase =
  { readonly kind: 'running' } | { readonly kind: 'cancel_requested' } | { readonly kind: 'capturing'; readonly usage: Usage };

export interface ExtensionCheck {
  /** the limits after the check: never lower than before, per dimension */
  readonly limits: Usage;
  /** whether any dimension grew (then the shell holds price(limits) − price(before)) */
  readonly grew: boolean;
  /** the step dimensions whose target lies above `limits` even after growing: `max_limits` stopped them */
  readonly short: readonly string[];
}

/** What the usage reports so far say: each dimension's largest report (they are cumulative). */
export function usageSoFar(before: Usage | null, report: Usage): Usage {
  const merged: Record<string, number> = { ...(before ?? {}) };
  for (const [dimension, units] of Object.entries(report)) merged[dimension] = Math.max(merged[dimension] ?? 0, units);
  return Object.freeze(merged);
}

/**
 * The target of one step dimension: the usage so far plus one step while the job works,
 * the usage so far once a cancel was asked for, the billed usage of a capturing event.
 */
export function extensionTarget(phase: ExtensionPhase, soFar: Usage, step: Usage, dimension: string): number {
  switch (phase.kind) {
    case 'running':
      return (soFar[dimension] ?? 0) + (step[dimension] ?? 0);
    case 'cancel_requested':
      return soFar[dimension] ?? 0;
    case 'capturing':
      return phase.usage[dimension] ?? 0;
  }
}

/**
 * For each dimension d of the step whose limit is below its target, the limit becomes
 * max(limits[d], min(maxLimits[d], the smallest limits[d] + k × step[d] ≥ target)):
 * whole steps, capped, never lowered. Other dimensions are left as they are.
 */
export function checkExtension(limits: Usage, rule: AutoExtend, soFar: Usage, phase: ExtensionPhase): ExtensionCheck {
  const next: Record<string, number> = { ...limits };
  const short: string[] = [];
  let grew = false;
  for (const [dimension, step] of Object.entries(rule.step)) {
    const current = limits[dimension] ?? 0;
    const target = extensionTarget(phase, soFar, rule.step, dimension);
    if (current >= target) continue;
    // In bigint: units are safe integers, but current + k × step need not be, and a float division could round.
    const [from, by] = [BigInt(current), BigInt(step)];
    const smallest = from + ((BigInt(target) - from + by - 1n) / by) * by;
    const cap = BigInt(rule.maxLimits[dimension] ?? 0);
    const grown = Number(smallest < cap ? (smallest > from ? smallest : from) : cap > from ? cap : from);
    if (grown > current) {
      next[dimension] = grown;
      grew = true;
    }
    if (grown < target) short.push(dimension);
  }
  return { limits: Object.freeze(next), grew, short };
}
