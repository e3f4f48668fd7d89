import fc from 'fast-check';
import type { LifecycleEvent } from '../../src/lifecycle/index.js';

/** Usage as the tests draw it: integer units per dimension. */
type Usage = Record<string, number>;

/**
 * Any lifecycle event a job can meet, for the property and replay tests: every type,
 * with usage or without where the contract allows both. The weights say how often each
 * comes (a test that studies corrections draws more of them); the order of the kinds is
 * fixed, so a seed replays the same events.
 */
export function lifecycleEventArb(
  usageArb: fc.Arbitrary<Usage>,
  weights: { completed: number; corrected: number; maxCorrection: number },
): fc.Arbitrary<LifecycleEvent> {
  const optionalUsage = (type: 'job.failed' | 'job.canceled') =>
    fc.option(usageArb, { nil: undefined }).map((usage): LifecycleEvent => (usage ? { type, usage } : { type }));
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant<LifecycleEvent>({ type: 'job.started' }) },
    { weight: weights.completed, arbitrary: usageArb.map((usage): LifecycleEvent => ({ type: 'job.completed', usage })) },
    { weight: 1, arbitrary: optionalUsage('job.failed') },
    { weight: 1, arbitrary: optionalUsage('job.canceled') },
    {
      weight: weights.corrected,
      arbitrary: fc
        .tuple(fc.integer({ min: 1, max: weights.maxCorrection }), usageArb)
        .map(([correction, usage]): LifecycleEvent => ({ type: 'job.usage_corrected', correction, usage })),
    },
    { weight: 1, arbitrary: fc.constant<LifecycleEvent>({ type: 'cancel.requested' }) },
    { weight: 1, arbitrary: fc.constant<LifecycleEvent>({ type: 'cancel.grace_elapsed' }) },
    { weight: 1, arbitrary: fc.constant<LifecycleEvent>({ type: 'hold.expired' }) },
  );
}
