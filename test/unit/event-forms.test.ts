import { describe, expect, it } from 'vitest';
import { InvalidEventError } from '../../src/lifecycle/index.js';
import { claimedLifecycleEvent, lifecycleEventOf, storedEventOf } from '../../src/queue/event-forms.js';

/** The one conversion between each pair of an event's forms (queue/event-forms.ts). */
describe('event forms', () => {
  const usage = { input_tokens: 10, output_tokens: 5 };

  it('keeps of a canonical event only what settling reads', () => {
    expect(storedEventOf({ eventKey: 'k', type: 'job.completed', jobId: 'j', model: 'm', usage })).toEqual({ type: 'job.completed', usage });
    expect(storedEventOf({ eventKey: 'k', type: 'job.completed', fetchUsage: true, usageResource: 'responses' })).toEqual({
      type: 'job.completed',
      fetch_usage: true,
      usage_resource: 'responses',
    });
  });

  it("settles with the webhook's usage, the fetched one, or none for a resolved hold", () => {
    expect(lifecycleEventOf({ type: 'job.completed', usage }, 'k')).toEqual({ type: 'job.completed', usage });
    expect(lifecycleEventOf({ type: 'job.completed', fetch_usage: true }, 'k', { from: 'fetched', usage })).toEqual({ type: 'job.completed', usage });
    expect(lifecycleEventOf({ type: 'job.failed', fetch_usage: true }, 'k', { from: 'fetched', usage: null })).toEqual({ type: 'job.failed' });
    expect(lifecycleEventOf({ type: 'job.completed', fetch_usage: true }, 'k', { from: 'not_fetched' })).toEqual({ type: 'job.completed', usage: {} });
    expect(lifecycleEventOf({ type: 'job.usage_corrected', usage, correction: 2 }, 'k')).toEqual({ type: 'job.usage_corrected', usage, correction: 2 });
    expect(claimedLifecycleEvent({ event_key: 'k', event: { type: 'job.completed', fetch_usage: true }, usage })).toEqual({ type: 'job.completed', usage });
  });

  it('refuses what cannot be settled, as a permanent error', () => {
    expect(() => lifecycleEventOf({ type: 'job.completed' }, 'k')).toThrow(InvalidEventError);
    expect(() => lifecycleEventOf({ type: 'job.completed', fetch_usage: true }, 'k', { from: 'fetched', usage: null })).toThrow(InvalidEventError);
    expect(() => lifecycleEventOf({ type: 'job.usage_corrected', usage }, 'k')).toThrow(/correction without usage or number/);
    expect(() => lifecycleEventOf({ type: 'job.started' }, 'k', { from: 'fetched', usage })).toThrow(/does not fetch usage/);
    expect(() => lifecycleEventOf({ type: 'job.exploded' }, 'k')).toThrow(/unknown type/);
  });
});
