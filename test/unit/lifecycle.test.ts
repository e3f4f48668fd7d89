import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { InvalidUsageError, amountOfSnapshot, billable, type Usage } from '../../src/pricing/index.js';
import {
  DEFAULT_POLICY,
  InvalidEventError,
  InvalidJobViewError,
  JOB_STATES,
  decide,
  isTerminal,
  type Alert,
  type Decision,
  type Intent,
  type JobState,
  type JobView,
  type LifecycleEvent,
  type ProviderPolicy,
} from '../../src/lifecycle/index.js';

import { BOOK, CAPTURE_POLICY, JOB, RESERVED, TENANT, USAGE } from '../support/lifecycle-fixtures.js';

/** A job as the shell would load it in `state`; a captured one was charged 3000 under correction 1. */
function jobIn(state: JobState, overrides: Partial<JobView> = {}): JobView {
  const captured = state === 'captured';
  return {
    id: JOB,
    tenantId: TENANT,
    state,
    reserved: RESERVED,
    captured: captured ? 3000n : null,
    adjusted: 0n,
    highestCorrection: captured ? 1 : 0,
    priceBook: BOOK,
    ...overrides,
  };
}

const VARIANTS = {
  started: [{ type: 'job.started' }, DEFAULT_POLICY],
  progress: [{ type: 'job.progress' }, DEFAULT_POLICY],
  completed: [{ type: 'job.completed', usage: USAGE }, DEFAULT_POLICY],
  'failed/release': [{ type: 'job.failed' }, DEFAULT_POLICY],
  'failed/capture': [{ type: 'job.failed' }, CAPTURE_POLICY],
  'failed+usage/release': [{ type: 'job.failed', usage: USAGE }, DEFAULT_POLICY],
  'failed+usage/capture': [{ type: 'job.failed', usage: USAGE }, CAPTURE_POLICY],
  canceled: [{ type: 'job.canceled' }, DEFAULT_POLICY],
  'canceled+usage': [{ type: 'job.canceled', usage: USAGE }, DEFAULT_POLICY],
  'corrected#1': [{ type: 'job.usage_corrected', usage: USAGE, correction: 1 }, DEFAULT_POLICY],
  'corrected#2': [{ type: 'job.usage_corrected', usage: USAGE, correction: 2 }, DEFAULT_POLICY],
  'cancel.requested': [{ type: 'cancel.requested' }, DEFAULT_POLICY],
  'cancel.grace_elapsed': [{ type: 'cancel.grace_elapsed' }, DEFAULT_POLICY],
  'hold.expired': [{ type: 'hold.expired' }, DEFAULT_POLICY],
} satisfies Record<string, readonly [LifecycleEvent, ProviderPolicy]>;
type Variant = keyof typeof VARIANTS;

type Row = readonly [
  state: JobState,
  variant: Variant,
  next: JobState,
  intent: Intent['kind'] | null,
  status: Decision['outcome']['status'],
  reason: string | undefined,
  raises: Alert[],
];

const CAPTURED = 'job_already_captured';
const RELEASED = 'job_already_released';
const LATE_SUCCESS: Alert[] = ['late_success_after_release'];
const LATE_USAGE: Alert[] = ['late_usage_after_release'];

// prettier-ignore
const ROWS: Row[] = [
  ['reserved',         'started', 'running',          null, 'applied',   undefined,         []],
  ['running',          'started', 'running',          null, 'applied',   'state_unchanged', []],
  ['cancel_requested', 'started', 'cancel_requested', null, 'applied',   'state_unchanged', []],
  ['usage_pending',    'started', 'usage_pending',    null, 'applied',   'state_unchanged', []],
  ['captured',         'started', 'captured',         null, 'no_effect', CAPTURED,          []],
  ['released',         'started', 'released',         null, 'no_effect', RELEASED,          []],

  ['reserved',         'progress', 'running',          null, 'applied',   undefined,         []],
  ['running',          'progress', 'running',          null, 'applied',   'state_unchanged', []],
  ['cancel_requested', 'progress', 'cancel_requested', null, 'applied',   'state_unchanged', []],
  ['usage_pending',    'progress', 'usage_pending',    null, 'applied',   'state_unchanged', []],
  ['captured',         'progress', 'captured',         null, 'no_effect', CAPTURED,          []],
  ['released',         'progress', 'released',         null, 'no_effect', RELEASED,          []],

  ['reserved',         'completed', 'captured', 'capture', 'applied',   undefined, []],
  ['running',          'completed', 'captured', 'capture', 'applied',   undefined, []],
  ['cancel_requested', 'completed', 'captured', 'capture', 'applied',   undefined, []],
  ['usage_pending',    'completed', 'captured', 'capture', 'applied',   undefined, []],
  ['captured',         'completed', 'captured', null,      'no_effect', CAPTURED,  []],
  ['released',         'completed', 'released', null,      'no_effect', RELEASED,  LATE_SUCCESS],

  ['reserved',         'failed/release', 'released', 'release', 'applied',   'job_failed', []],
  ['running',          'failed/release', 'released', 'release', 'applied',   'job_failed', []],
  ['cancel_requested', 'failed/release', 'released', 'release', 'applied',   'job_failed', []],
  ['usage_pending',    'failed/release', 'released', 'release', 'applied',   'job_failed', []],
  ['captured',         'failed/release', 'captured', null,      'no_effect', CAPTURED,     []],
  ['released',         'failed/release', 'released', null,      'no_effect', RELEASED,     []],

  ['reserved',         'failed/capture', 'released', 'release', 'applied',   'job_failed', []],
  ['running',          'failed/capture', 'released', 'release', 'applied',   'job_failed', []],
  ['cancel_requested', 'failed/capture', 'released', 'release', 'applied',   'job_failed', []],
  ['usage_pending',    'failed/capture', 'released', 'release', 'applied',   'job_failed', []],
  ['captured',         'failed/capture', 'captured', null,      'no_effect', CAPTURED,     []],
  ['released',         'failed/capture', 'released', null,      'no_effect', RELEASED,     []],

  ['reserved',         'failed+usage/release', 'released', 'release', 'applied',   'job_failed', []],
  ['running',          'failed+usage/release', 'released', 'release', 'applied',   'job_failed', []],
  ['cancel_requested', 'failed+usage/release', 'released', 'release', 'applied',   'job_failed', []],
  ['usage_pending',    'failed+usage/release', 'released', 'release', 'applied',   'job_failed', []],
  ['captured',         'failed+usage/release', 'captured', null,      'no_effect', CAPTURED,     []],
  ['released',         'failed+usage/release', 'released', null,      'no_effect', RELEASED,     []],

  ['reserved',         'failed+usage/capture', 'captured', 'capture', 'applied',   undefined, []],
  ['running',          'failed+usage/capture', 'captured', 'capture', 'applied',   undefined, []],
  ['cancel_requested', 'failed+usage/capture', 'captured', 'capture', 'applied',   undefined, []],
  ['usage_pending',    'failed+usage/capture', 'captured', 'capture', 'applied',   undefined, []],
  ['captured',         'failed+usage/capture', 'captured', null,      'no_effect', CAPTURED,  []],
  ['released',         'failed+usage/capture', 'released', null,      'no_effect', RELEASED,  []],

  ['reserved',         'canceled', 'released', 'release', 'applied',   'job_canceled', []],
  ['running',          'canceled', 'released', 'release', 'applied',   'job_canceled', []],
  ['cancel_requested', 'canceled', 'released', 'release', 'applied',   'job_canceled', []],
  ['usage_pending',    'canceled', 'released', 'release', 'applied',   'job_canceled', []],
  ['captured',         'canceled', 'captured', null,      'no_effect', CAPTURED,       []],
  ['released',         'canceled', 'released', null,      'no_effect', RELEASED,       []],

  ['reserved',         'canceled+usage', 'captured', 'capture', 'applied',   undefined, []],
  ['running',          'canceled+usage', 'captured', 'capture', 'applied',   undefined, []],
  ['cancel_requested', 'canceled+usage', 'captured', 'capture', 'applied',   undefined, []],
  ['usage_pending',    'canceled+usage', 'captured', 'capture', 'applied',   undefined, []],
  ['captured',         'canceled+usage', 'captured', null,      'no_effect', CAPTURED,  []],
  ['released',         'canceled+usage', 'released', null,      'no_effect', RELEASED,  LATE_USAGE],

  ['reserved',         'corrected#1', 'captured', 'capture', 'applied',   undefined,              []],
  ['running',          'corrected#1', 'captured', 'capture', 'applied',   undefined,              []],
  ['cancel_requested', 'corrected#1', 'captured', 'capture', 'applied',   undefined,              []],
  ['usage_pending',    'corrected#1', 'captured', 'capture', 'applied',   undefined,              []],
  ['captured',         'corrected#1', 'captured', null,      'stale',     'correction_not_newer', []],
  ['released',         'corrected#1', 'released', null,      'no_effect', RELEASED,               LATE_USAGE],

  ['reserved',         'corrected#2', 'captured', 'capture',    'applied',   undefined, []],
  ['running',          'corrected#2', 'captured', 'capture',    'applied',   undefined, []],
  ['cancel_requested', 'corrected#2', 'captured', 'capture',    'applied',   undefined, []],
  ['usage_pending',    'corrected#2', 'captured', 'capture',    'applied',   undefined, []],
  ['captured',         'corrected#2', 'captured', 'adjustment', 'applied',   undefined, []],
  ['released',         'corrected#2', 'released', null,         'no_effect', RELEASED,  LATE_USAGE],

  ['reserved',         'cancel.requested', 'cancel_requested', null, 'applied',  undefined,                  []],
  ['running',          'cancel.requested', 'cancel_requested', null, 'applied',  undefined,                  []],
  ['cancel_requested', 'cancel.requested', 'cancel_requested', null, 'applied',  'cancel_already_requested', []],
  ['usage_pending',    'cancel.requested', 'usage_pending',    null, 'applied',  'completion_in_progress',   []],
  ['captured',         'cancel.requested', 'captured',         null, 'rejected', 'job_terminal',             []],
  ['released',         'cancel.requested', 'released',         null, 'rejected', 'job_terminal',             []],

  ['reserved',         'cancel.grace_elapsed', 'reserved',      null,      'no_effect', 'not_cancel_requested', []],
  ['running',          'cancel.grace_elapsed', 'running',       null,      'no_effect', 'not_cancel_requested', []],
  ['cancel_requested', 'cancel.grace_elapsed', 'released',      'release', 'applied',   'cancel_grace_elapsed', []],
  ['usage_pending',    'cancel.grace_elapsed', 'usage_pending', null,      'no_effect', 'not_cancel_requested', []],
  ['captured',         'cancel.grace_elapsed', 'captured',      null,      'no_effect', CAPTURED,               []],
  ['released',         'cancel.grace_elapsed', 'released',      null,      'no_effect', RELEASED,               []],

  ['reserved',         'hold.expired', 'released', 'release', 'applied',   'hold_expired', []],
  ['running',          'hold.expired', 'released', 'release', 'applied',   'hold_expired', []],
  ['cancel_requested', 'hold.expired', 'released', 'release', 'applied',   'hold_expired', []],
  ['usage_pending',    'hold.expired', 'released', 'release', 'applied',   'hold_expired', []],
  ['captured',         'hold.expired', 'captured', null,      'no_effect', CAPTURED,       []],
  ['released',         'hold.expired', 'released', null,      'no_effect', RELEASED,       []],
];

describe('decide: every state × event', () => {
  it('the table has exactly one row per (state, event variant)', () => {
    const cells = ROWS.map(([state, variant]) => `${state}|${variant}`);
    expect(new Set(cells).size).toBe(cells.length);
    expect(cells.length).toBe(JOB_STATES.length * Object.keys(VARIANTS).length);
  });

  it.each(ROWS)('%s + %s → %s (%s, %s, %s)', (state, variant, next, intent, status, reason, raises) => {
    const [event, policy] = VARIANTS[variant];
    const job = jobIn(state);
    const decision = decide(job, event, policy);
    expect(decision.nextState).toBe(next);
    expect(decision.intents.map((i) => i.kind)).toEqual(intent === null ? [] : [intent]);
    expect(decision.outcome).toEqual(reason === undefined ? { status, raises } : { status, reason, raises });
    const corrected = event.type === 'job.usage_corrected' && intent !== null;
    expect(decision.highestCorrection).toBe(corrected ? event.correction : job.highestCorrection);
  });
});

describe('decide: amounts and keys', () => {
  it('a capture charges the billable amount and voids the rest under the capture key', () => {
    const decision = decide(jobIn('running'), { type: 'job.completed', usage: USAGE }, DEFAULT_POLICY);
    const [intent] = decision.intents;
    expect(intent).toMatchObject({
      kind: 'capture',
      key: `${TENANT}:${JOB}:capture:1`,
      amount: 2000n,
      remainder: 8000n,
    });
    if (intent?.kind !== 'capture') throw new Error('expected a capture');
    expect(intent.snapshot).toMatchObject({ billable: '0.002000', price: '0.002000', cap: '0.010000', priceVersion: 1 });
    expect(amountOfSnapshot(intent.snapshot)).toBe(intent.amount);
  });

  it('usage beyond the hold captures the hold and raises usage_exceeds_reservation', () => {
    const decision = decide(jobIn('running'), { type: 'job.completed', usage: { output_tokens: 10_000 } }, DEFAULT_POLICY);
    expect(decision.intents[0]).toMatchObject({ kind: 'capture', amount: RESERVED, remainder: 0n });
    expect(decision.outcome.raises).toEqual(['usage_exceeds_reservation']);
  });

  it('a release voids the whole hold under the release key', () => {
    const decision = decide(jobIn('cancel_requested'), { type: 'cancel.grace_elapsed' }, DEFAULT_POLICY);
    expect(decision.intents).toEqual([
      {
        kind: 'release',
        key: `${TENANT}:${JOB}:release:1`,
        amount: RESERVED,
        reason: 'cancel_grace_elapsed',
        posting: { kind: 'release' },
      },
    ]);
  });

  it('an adjustment brings the total charged to billable(corrected usage)', () => {
    const job = jobIn('captured', { captured: 3000n, adjusted: -500n, highestCorrection: 1 });
    const decision = decide(job, { type: 'job.usage_corrected', usage: USAGE, correction: 3 }, DEFAULT_POLICY);
    expect(decision.intents[0]).toMatchObject({
      kind: 'adjustment',
      key: `${TENANT}:${JOB}:adjustment:3`,
      version: 3,
      amount: 2000n - 2500n,
    });
    expect(decision.highestCorrection).toBe(3);
  });

  it('an adjustment may be zero, and is capped at the hold', () => {
    const same = decide(
      jobIn('captured', { captured: 2000n }),
      { type: 'job.usage_corrected', usage: USAGE, correction: 2 },
      DEFAULT_POLICY,
    );
    expect(same.intents[0]).toMatchObject({ kind: 'adjustment', amount: 0n });
    const huge = decide(
      jobIn('captured', { captured: 2000n }),
      { type: 'job.usage_corrected', usage: { output_tokens: 10 ** 9 }, correction: 2 },
      DEFAULT_POLICY,
    );
    expect(huge.intents[0]).toMatchObject({ kind: 'adjustment', amount: RESERVED - 2000n });
    expect(huge.outcome.raises).toEqual(['usage_exceeds_reservation']);
  });

  it('a correction before any completion is the completion, at its own usage', () => {
    const decision = decide(jobIn('reserved'), { type: 'job.usage_corrected', usage: { input_tokens: 7 }, correction: 4 }, DEFAULT_POLICY);
    expect(decision.intents[0]).toMatchObject({ kind: 'capture', amount: 7n, remainder: RESERVED - 7n });
    expect(decision.highestCorrection).toBe(4);
  });
});

describe('decide: refusals and purity', () => {
  it.each([0, -1, 1.5, Number.NaN, 2 ** 53])('refuses correction %s with a typed error', (correction) => {
    const event = { type: 'job.usage_corrected', usage: USAGE, correction } as const;
    expect(() => decide(jobIn('captured'), event, DEFAULT_POLICY)).toThrow(InvalidEventError);
  });

  it('refuses an unknown event type and invalid usage with typed errors', () => {
    const unknown = { type: 'job.exploded' } as unknown as LifecycleEvent;
    expect(() => decide(jobIn('running'), unknown, DEFAULT_POLICY)).toThrow(InvalidEventError);
    const bad = { type: 'job.completed', usage: { input_tokens: -1 } } as const;
    expect(() => decide(jobIn('running'), bad, DEFAULT_POLICY)).toThrow(InvalidUsageError);
  });

  it('refuses a captured job without a captured amount', () => {
    expect(() => decide(jobIn('captured', { captured: null }), { type: 'job.started' }, DEFAULT_POLICY)).toThrow(InvalidJobViewError);
  });

  it('is deterministic and does not mutate its inputs', () => {
    const job = Object.freeze(jobIn('running'));
    const event = Object.freeze({ type: 'job.completed', usage: Object.freeze({ ...USAGE }) } as const);
    expect(decide(job, event, DEFAULT_POLICY)).toEqual(decide(job, event, DEFAULT_POLICY));
  });
});

// ---- Properties: fold decide over event sequences as the shell would ----

const DIMENSIONS = ['input_tokens', 'output_tokens', 'unpriced'] as const;
const usageArb: fc.Arbitrary<Usage> = fc.dictionary(
  fc.constantFrom(...DIMENSIONS),
  fc.oneof(fc.nat(100_000), fc.nat(Number.MAX_SAFE_INTEGER)),
);
const optionalUsage = fc.option(usageArb, { nil: undefined });
const withUsage = <T extends object>(base: T, usage: Usage | undefined) => (usage === undefined ? base : { ...base, usage });

// Corrections are weighted up so that sequences often reach several adjustments.
const eventArb: fc.Arbitrary<LifecycleEvent> = fc.oneof(
  fc.constant({ type: 'job.started' } as const),
  fc.constant({ type: 'job.progress' } as const),
  { arbitrary: usageArb.map((usage) => ({ type: 'job.completed', usage }) as const), weight: 2 },
  optionalUsage.map((usage) => withUsage({ type: 'job.failed' } as const, usage)),
  optionalUsage.map((usage) => withUsage({ type: 'job.canceled' } as const, usage)),
  {
    arbitrary: fc
      .tuple(usageArb, fc.integer({ min: 1, max: 6 }))
      .map(([usage, correction]) => ({ type: 'job.usage_corrected', usage, correction }) as const),
    weight: 5,
  },
  fc.constant({ type: 'cancel.requested' } as const),
  fc.constant({ type: 'cancel.grace_elapsed' } as const),
  fc.constant({ type: 'hold.expired' } as const),
);

const jobArb: fc.Arbitrary<JobView> = fc
  .tuple(
    fc.constantFrom<JobState>('reserved', 'running', 'cancel_requested', 'usage_pending'),
    fc.bigInt({ min: 0n, max: 10n ** 12n }),
    fc.dictionary(fc.constantFrom('input_tokens', 'output_tokens'), fc.bigInt({ min: 0n, max: 10n ** 9n })),
  )
  .map(([state, reserved, unitPrices]) => ({
    ...jobIn(state),
    reserved,
    priceBook: { ...BOOK, unitPrices },
  }));

const policyArb = fc.constantFrom<ProviderPolicy>(DEFAULT_POLICY, CAPTURE_POLICY);

/** What the shell writes for a decision, reduced to the columns decide reads back. */
function apply(job: JobView, decision: Decision): JobView {
  let next: JobView = { ...job, state: decision.nextState, highestCorrection: decision.highestCorrection };
  for (const intent of decision.intents) {
    if (intent.kind === 'capture') next = { ...next, captured: intent.amount };
    if (intent.kind === 'adjustment') next = { ...next, adjusted: next.adjusted + intent.amount };
  }
  return next;
}

interface Trace {
  job: JobView;
  decisions: Array<{ before: JobView; event: LifecycleEvent; decision: Decision }>;
  /** Usage of the latest event whose decision charged (capture or adjustment). */
  latestCharged: Usage | null;
}

function run(start: JobView, events: LifecycleEvent[], policy: ProviderPolicy): Trace {
  const trace: Trace = { job: start, decisions: [], latestCharged: null };
  for (const event of events) {
    const decision = decide(trace.job, event, policy);
    trace.decisions.push({ before: trace.job, event, decision });
    if (decision.intents.some((i) => i.kind === 'capture' || i.kind === 'adjustment')) {
      trace.latestCharged = 'usage' in event && event.usage !== undefined ? event.usage : null;
    }
    trace.job = apply(trace.job, decision);
  }
  return trace;
}

const resolving = (intent: Intent) => intent.kind === 'capture' || intent.kind === 'release';

describe('decide: properties over event sequences', () => {
  const sequences = fc.tuple(jobArb, fc.array(eventArb, { maxLength: 12 }), policyArb);

  it('(1) at most one capture-or-release is ever emitted per job', () => {
    fc.assert(
      fc.property(sequences, ([job, events, policy]) => {
        const { decisions } = run(job, events, policy);
        expect(decisions.flatMap((d) => d.decision.intents).filter(resolving).length).toBeLessThanOrEqual(1);
      }),
    );
  });

  it('(2) capture.amount + capture.remainder = reserved, both non-negative; a release voids all of it', () => {
    fc.assert(
      fc.property(sequences, ([job, events, policy]) => {
        for (const intent of run(job, events, policy).decisions.flatMap((d) => d.decision.intents)) {
          if (intent.kind === 'capture') {
            expect(intent.amount + intent.remainder).toBe(job.reserved);
            expect(intent.amount >= 0n && intent.remainder >= 0n).toBe(true);
          }
          if (intent.kind === 'release') expect(intent.amount).toBe(job.reserved);
        }
      }),
    );
  });

  it('(3) captured + adjusted = billable(latest charged usage) ≤ reserved', () => {
    fc.assert(
      fc.property(sequences, ([job, events, policy]) => {
        const { job: end, latestCharged } = run(job, events, policy);
        if (end.state !== 'captured') {
          expect(end.captured).toBeNull();
          expect(end.adjusted).toBe(0n);
          return;
        }
        expect(latestCharged).not.toBeNull();
        const total = (end.captured ?? 0n) + end.adjusted;
        expect(total).toBe(billable(end.priceBook, latestCharged ?? {}, end.reserved).amount);
        expect(total <= end.reserved && total >= 0n).toBe(true);
      }),
    );
  });

  it('(4) no decision carries two terminal financial intents', () => {
    fc.assert(
      fc.property(sequences, ([job, events, policy]) => {
        for (const { decision } of run(job, events, policy).decisions) {
          expect(decision.intents.filter(resolving).length).toBeLessThanOrEqual(1);
          expect(decision.intents.length).toBeLessThanOrEqual(1);
        }
      }),
    );
  });

  it('(5) a decision on a terminal job never emits capture or release, and the terminal state holds', () => {
    fc.assert(
      fc.property(sequences, ([job, events, policy]) => {
        for (const { before, decision } of run(job, events, policy).decisions) {
          if (!isTerminal(before.state)) continue;
          expect(decision.intents.filter(resolving)).toEqual([]);
          expect(decision.nextState).toBe(before.state);
          if (before.state === 'released') expect(decision.intents).toEqual([]);
        }
      }),
    );
  });

  it('each adjustment version is used once, in increasing order (unique settlement keys)', () => {
    fc.assert(
      fc.property(sequences, ([job, events, policy]) => {
        const keys = run(job, events, policy).decisions.flatMap((d) => d.decision.intents.map((i) => i.key));
        expect(new Set(keys).size).toBe(keys.length);
        const versions = run(job, events, policy)
          .decisions.flatMap((d) => d.decision.intents)
          .flatMap((i) => (i.kind === 'adjustment' ? [i.version] : []));
        expect(versions).toEqual([...versions].sort((a, b) => a - b));
      }),
    );
  });

  it('every outcome other than applied names a reason; corrections never go backwards', () => {
    fc.assert(
      fc.property(sequences, ([job, events, policy]) => {
        for (const { before, decision } of run(job, events, policy).decisions) {
          if (decision.outcome.status !== 'applied') expect(decision.outcome.reason).toMatch(/^[a-z]+(_[a-z]+)*$/);
          expect(decision.highestCorrection).toBeGreaterThanOrEqual(before.highestCorrection);
        }
      }),
    );
  });
});
