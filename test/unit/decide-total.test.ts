import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  DEFAULT_POLICY,
  JOB_STATES,
  decide,
  settlementKey,
  type Decision,
  type JobState,
  type JobView,
  type LifecycleEvent,
  type ProviderPolicy,
} from '../../src/lifecycle/index.js';

// decide() is total: what the settle shell used to work out itself — the job's totals,
// the earlier effect to return, entering and leaving usage_pending, the cancel to record,
// whether an awaiting event holds a release back — comes out of (or goes into) it.

import { BOOK, CAPTURE_POLICY, JOB, RESERVED, TENANT, USAGE } from '../support/lifecycle-fixtures.js';

function job(state: JobState, overrides: Partial<JobView> = {}): JobView {
  const captured = state === 'captured';
  const released = state === 'released';
  return {
    id: JOB,
    tenantId: TENANT,
    state,
    reserved: RESERVED,
    captured: captured ? 3000n : released ? 0n : null,
    released: captured ? RESERVED - 3000n : released ? RESERVED : null,
    adjusted: 0n,
    highestCorrection: captured ? 1 : 0,
    priceBook: BOOK,
    ...overrides,
  };
}

const key = (chargeType: 'capture' | 'release' | 'adjustment', version = 1) => settlementKey(TENANT, JOB, chargeType, version);

/** The totals rule the settle shell applied before decide() returned them (ledger/settle.ts updateJob at cbec97f). */
function totalsByTheOldShell(view: JobView, decision: Decision) {
  let captured = view.captured;
  let released = view.released ?? null;
  let adjusted = view.adjusted;
  for (const intent of decision.intents) {
    if (intent.kind === 'capture') [captured, released] = [intent.amount, intent.remainder];
    if (intent.kind === 'release') [captured, released] = [0n, intent.amount];
    if (intent.kind === 'adjustment') adjusted += intent.amount;
  }
  return { captured, released, adjusted };
}

const usageArb = fc.record({ input_tokens: fc.nat(20_000), output_tokens: fc.nat(20_000) });
const optionalUsage = fc.option(usageArb, { nil: undefined });
const eventArb: fc.Arbitrary<LifecycleEvent> = fc.oneof(
  fc.constant({ type: 'job.started' } as const),
  fc.constant({ type: 'job.progress' } as const),
  usageArb.map((usage) => ({ type: 'job.completed', usage }) as const),
  optionalUsage.map((usage) => (usage ? ({ type: 'job.failed', usage } as const) : ({ type: 'job.failed' } as const))),
  optionalUsage.map((usage) => (usage ? ({ type: 'job.canceled', usage } as const) : ({ type: 'job.canceled' } as const))),
  fc.tuple(usageArb, fc.integer({ min: 1, max: 4 })).map(([usage, correction]) => ({ type: 'job.usage_corrected', usage, correction }) as const),
  fc.constant({ type: 'cancel.requested' } as const),
  fc.constant({ type: 'cancel.grace_elapsed' } as const),
  fc.constant({ type: 'hold.expired' } as const),
  fc.constant({ type: 'usage.fetch_started' } as const),
  fc.constant({ type: 'usage.mismatched' } as const),
);
const viewArb: fc.Arbitrary<JobView> = fc
  .tuple(fc.constantFrom<JobState>(...JOB_STATES), fc.boolean(), fc.boolean(), fc.constantFrom<JobState>('reserved', 'running', 'cancel_requested'))
  .map(([state, cancelRequested, eventAwaiting, resume]) =>
    job(state, { cancelRequested, eventAwaiting, resumeState: state === 'usage_pending' ? resume : null }),
  );
const policyArb = fc.constantFrom<ProviderPolicy>(DEFAULT_POLICY, CAPTURE_POLICY);

describe('decide() returns the job totals', () => {
  it('equal to what the shell derived from the intents, for every state × event', () => {
    fc.assert(
      fc.property(viewArb, eventArb, policyArb, (view, event, policy) => {
        const decision = decide(view, event, policy);
        expect(decision.totals).toEqual(totalsByTheOldShell(view, decision));
      }),
      { numRuns: 2000 },
    );
  });

  it('capture + release = reservation once the hold is resolved', () => {
    fc.assert(
      fc.property(viewArb, eventArb, policyArb, (view, event, policy) => {
        const decision = decide(view, event, policy);
        if (decision.intents.some((i) => i.kind === 'capture' || i.kind === 'release')) {
          expect(decision.totals.captured! + decision.totals.released!).toBe(RESERVED);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('decide() names the effect of an event', () => {
  it("is the intent's own key when the decision writes one", () => {
    fc.assert(
      fc.property(viewArb, eventArb, policyArb, (view, event, policy) => {
        const decision = decide(view, event, policy);
        for (const intent of decision.intents) expect(decision.effectKey).toBe(intent.key);
      }),
      { numRuns: 2000 },
    );
  });

  it('a second completion returns the capture; on a released job it has none', () => {
    expect(decide(job('captured'), { type: 'job.completed', usage: USAGE }, DEFAULT_POLICY).effectKey).toBe(key('capture'));
    expect(decide(job('released'), { type: 'job.completed', usage: USAGE }, DEFAULT_POLICY).effectKey).toBeNull();
  });

  it('an event of the other phase has no effect of its own (a failure after the capture, a release after a release)', () => {
    expect(decide(job('captured'), { type: 'job.failed' }, DEFAULT_POLICY).effectKey).toBeNull();
    expect(decide(job('released'), { type: 'job.failed' }, DEFAULT_POLICY).effectKey).toBe(key('release'));
    expect(decide(job('released'), { type: 'job.failed', usage: USAGE }, CAPTURE_POLICY).effectKey).toBeNull();
    expect(decide(job('captured'), { type: 'job.canceled', usage: USAGE }, DEFAULT_POLICY).effectKey).toBe(key('capture'));
    expect(decide(job('released'), { type: 'hold.expired' }, DEFAULT_POLICY).effectKey).toBe(key('release'));
    expect(decide(job('released'), { type: 'cancel.grace_elapsed' }, DEFAULT_POLICY).effectKey).toBe(key('release'));
  });

  it('a repeated correction returns its adjustment; events with no money have none', () => {
    const corrected = job('captured', { highestCorrection: 2 });
    expect(decide(corrected, { type: 'job.usage_corrected', usage: USAGE, correction: 2 }, DEFAULT_POLICY).effectKey).toBe(
      key('adjustment', 2),
    );
    for (const type of ['job.started', 'job.progress', 'cancel.requested'] as const) {
      expect(decide(job('running'), { type }, DEFAULT_POLICY).effectKey).toBeNull();
    }
  });
});

describe('usage_pending is entered and left by decide()', () => {
  it('a fetch starting remembers where the job was', () => {
    for (const state of ['reserved', 'running', 'cancel_requested'] as const) {
      const decision = decide(job(state), { type: 'usage.fetch_started' }, DEFAULT_POLICY);
      expect([decision.nextState, decision.resumeState, decision.intents]).toEqual(['usage_pending', state, []]);
    }
  });

  it("a fetch started again (the same event's next attempt) keeps the first resume state", () => {
    const decision = decide(job('usage_pending', { resumeState: 'running' }), { type: 'usage.fetch_started' }, DEFAULT_POLICY);
    expect([decision.nextState, decision.resumeState]).toEqual(['usage_pending', 'running']);
  });

  it('no fetch for a resolved hold: no effect, nothing moves', () => {
    for (const state of ['captured', 'released'] as const) {
      const decision = decide(job(state), { type: 'usage.fetch_started' }, DEFAULT_POLICY);
      expect([decision.outcome.status, decision.nextState, decision.intents]).toEqual(['no_effect', state, []]);
    }
  });

  it('usage that is not the job\'s puts it back, to cancel_requested when the tenant cancelled meanwhile', () => {
    const back = (resumeState: JobState, cancelRequested: boolean) => {
      const decision = decide(job('usage_pending', { resumeState, cancelRequested }), { type: 'usage.mismatched' }, DEFAULT_POLICY);
      expect(decision.outcome).toEqual({ status: 'no_effect', reason: 'event_mismatch', raises: [] });
      expect(decision.intents).toEqual([]);
      expect(decision.resumeState).toBeNull();
      return decision.nextState;
    };
    expect(back('running', false)).toBe('running');
    expect(back('reserved', false)).toBe('reserved');
    expect(back('running', true)).toBe('cancel_requested');
    expect(back('reserved', true)).toBe('cancel_requested');
    expect(back('cancel_requested', true)).toBe('cancel_requested');
  });

  it('a tenant cancel during the fetch is recorded, once, without moving the job', () => {
    const during = decide(job('usage_pending', { resumeState: 'running' }), { type: 'cancel.requested' }, DEFAULT_POLICY);
    expect([during.nextState, during.recordsCancel, during.outcome.reason]).toEqual(['usage_pending', true, 'completion_in_progress']);
    const again = decide(job('usage_pending', { resumeState: 'running', cancelRequested: true }), { type: 'cancel.requested' }, DEFAULT_POLICY);
    expect(again.recordsCancel).toBe(false);
  });
});

describe('an event still awaiting settlement is an input', () => {
  it('holds back the cancel grace and the expiry, on any job', () => {
    for (const state of JOB_STATES) {
      for (const type of ['cancel.grace_elapsed', 'hold.expired'] as const) {
        const decision = decide(job(state, { eventAwaiting: true }), { type }, DEFAULT_POLICY);
        expect([decision.outcome, decision.intents, decision.nextState]).toEqual([
          { status: 'no_effect', reason: 'event_pending', raises: [] },
          [],
          state,
        ]);
      }
    }
  });

  it('changes nothing for the events that are themselves awaited', () => {
    fc.assert(
      fc.property(viewArb, eventArb, policyArb, (view, event, policy) => {
        fc.pre(event.type !== 'cancel.grace_elapsed' && event.type !== 'hold.expired');
        expect(decide({ ...view, eventAwaiting: true }, event, policy)).toEqual(decide({ ...view, eventAwaiting: false }, event, policy));
      }),
      { numRuns: 1000 },
    );
  });
});
