import { describe, expect, it } from 'vitest';
import { Model, ModelDisagrees, type ExpectedJob, type ExpectedWallet } from '../../sim/model.js';
import { price } from '../../sim/model-money.js';
import type { Answer, AutoExtendRule, Op, ProviderEventType, Usage } from '../../sim/ops.js';

/**
 * The simulation's reference model (sim/model.ts), by hand-computed cases: each rule of
 * docs/CONTRACT.md it models (grants, holds, captures, debt, refunds, spend limits, hold
 * extensions, the exhausted states, the races), the answers it refuses to accept, and
 * docs/long-running-jobs.md's worked example replayed as ops. Pure: no database.
 * Prices are the simulation's: 0.002 per gpu_second, 0.000003 per input token.
 */

/** "1.2" → 1_200_000n: amounts written as the API writes them, so each case reads as it was worked out. */
function usd(amount: string): bigint {
  if (amount.startsWith('-')) return -usd(amount.slice(1));
  const [whole, fraction = ''] = amount.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
}

const T0 = Date.UTC(2026, 11, 2, 10, 0, 0);
const SECOND = 1000;

const DEFAULT_STATUS: Record<Op['kind'], number> = {
  tenant: 201,
  credit: 201,
  grant: 201,
  void_grant: 200,
  spend_limit: 201,
  submit: 201,
  event: 200,
  extend: 201,
  cancel: 202,
  race_extend_complete: 201,
  race_cancel_complete: 202,
  checkout: 201,
  refund: 200,
  dispute_open: 200,
  dispute_close: 200,
  card: 200,
  auto_recharge: 200,
  dead_letter: 202,
  race_submits: 201,
  check: 200,
};

const DELIVERY = { order: 1, copies: 2, forged: true, onlyCompleted: false };

/** A model driven as the driver would: one op after another, a second apart unless told. */
class Run {
  readonly model: Model;
  at = T0;

  constructor(options?: ConstructorParameters<typeof Model>[0]) {
    this.model = new Model(options);
    this.do({ kind: 'tenant', tenant: 't1', wallet: 'w1' });
  }

  do(op: Op, answer?: Partial<Answer>, at?: number): this {
    this.at = at ?? this.at + SECOND;
    this.model.apply(op, { status: answer?.status ?? DEFAULT_STATUS[op.kind], ...(answer?.code ? { code: answer.code } : {}) }, this.at);
    return this;
  }

  credit(grant: string, amount: string): this {
    return this.do({ kind: 'credit', wallet: 'w1', grant, amount: usd(amount) });
  }

  grant(
    grant: string,
    amount: string,
    options: { category?: 'paid' | 'promotional'; priority?: number; expiresInMs?: number | null } = {},
  ): this {
    const { category = 'promotional', priority = 50, expiresInMs = null } = options;
    return this.do({ kind: 'grant', wallet: 'w1', grant, amount: usd(amount), category, priority, expiresInMs });
  }

  submit(job: string, limits: Usage, autoExtend: AutoExtendRule | null = null, answer?: Partial<Answer>): this {
    return this.do({ kind: 'submit', wallet: 'w1', job, limits, autoExtend }, answer);
  }

  event(job: string, type: ProviderEventType, usage?: Usage, correction?: number, answer?: Partial<Answer>): this {
    const op: Op = { kind: 'event', wallet: 'w1', job, type, copies: 2, reemit: true, forged: false, conflicting: false };
    return this.do({ ...op, ...(usage ? { usage } : {}), ...(correction ? { correction } : {}) }, answer);
  }

  extend(job: string, add: Usage, answer?: Partial<Answer>): this {
    return this.do({ kind: 'extend', wallet: 'w1', job, add, copies: 2 }, answer);
  }

  cancel(job: string, answer?: Partial<Answer>): this {
    return this.do({ kind: 'cancel', wallet: 'w1', job }, answer);
  }

  check(at?: number): this {
    return this.do({ kind: 'check' }, undefined, at);
  }

  wallet(): ExpectedWallet {
    return this.model.wallets().get('w1')!;
  }

  job(name: string): ExpectedJob {
    return this.model.jobs().get(name)!;
  }

  grantView(name: string): { remaining: bigint; held: bigint; status: string } {
    const { amount: _amount, ...view } = this.wallet().grants.get(name)!;
    return view;
  }

  checkout(grant: string, amount: string, options: { paid?: boolean; card?: string } = {}, answer?: Partial<Answer>): this {
    const { paid = true, card = 'pm_1' } = options;
    return this.do({ kind: 'checkout', wallet: 'w1', grant, amount: usd(amount), paid, card, delivery: DELIVERY }, answer);
  }

  autoRecharge(threshold: string, target: string, monthlyLimit: string | null = null, answer?: Partial<Answer>): this {
    const limit = monthlyLimit === null ? null : usd(monthlyLimit);
    return this.do({ kind: 'auto_recharge', wallet: 'w1', enabled: true, threshold: usd(threshold), target: usd(target), monthlyLimit: limit }, answer);
  }

  /** The wallet's recharges' grants, in order: amount and status. */
  recharges(): { amount: bigint; status: string }[] {
    return [...this.wallet().grants.entries()].filter(([name]) => name.includes(':recharge:')).map(([, g]) => ({ amount: g.amount, status: g.status }));
  }
}

const gpu = (units: number): Usage => ({ gpu_seconds: units });
const auto = (step: number, max: number): AutoExtendRule => ({ step: gpu(step), max_limits: gpu(max) });
const money = (w: ExpectedWallet) => ({ balance: w.balance, reserved: w.reserved, available: w.available, debt: w.debt });

describe('pricing', () => {
  it('prices each priced dimension, units × unit price / 1,000,000, and ignores the others', () => {
    expect(price(gpu(600))).toBe(usd('1.2'));
    expect(price({ input_tokens: 1000, gpu_seconds: 1, frames: 99 })).toBe(usd('0.005'));
  });

  it('rounds half-up to the micro-unit per dimension, then sums', () => {
    const prices = { a: 500_000n, b: 499_999n };
    expect(price({ a: 1 }, prices)).toBe(1n); // 0.5 → 1
    expect(price({ b: 1 }, prices)).toBe(0n); // 0.499999 → 0
    expect(price({ a: 3 }, prices)).toBe(2n); // 1.5 → 2
    expect(price({ a: 1, b: 1 }, prices)).toBe(1n); // 1 + 0, not round(0.999999)
    expect(price({ a: 1, c: 5 }, { a: 500_000n, c: 500_000n })).toBe(4n); // 1 + 3 (2.5 → 3), not round(3.0)
  });
});

describe('grants', () => {
  it('a hold is split in draw-down order: lowest priority, soonest expiry, promotional before paid, then creation', () => {
    const run = new Run()
      .credit('paid', '1.0')
      .grant('promo', '1.0')
      .grant('expiring', '1.0', { category: 'paid', expiresInMs: 3_600_000 })
      .grant('first', '0.3', { priority: 10 })
      .submit('j1', gpu(1000)); // 2.000000
    expect(run.grantView('first').held).toBe(usd('0.3'));
    expect(run.grantView('expiring').held).toBe(usd('1.0'));
    expect(run.grantView('promo').held).toBe(usd('0.7'));
    expect(run.grantView('paid').held).toBe(0n);
    expect(money(run.wallet())).toEqual({ balance: usd('3.3'), reserved: usd('2.0'), available: usd('1.3'), debt: 0n });
  });

  it('a capture consumes the shares in allocation order and returns the rest of each', () => {
    const run = new Run().grant('promo', '1.0', { priority: 10 }).credit('paid', '5.0').submit('j1', gpu(1000)); // 1.0 + 1.0 held
    expect(money(run.wallet())).toEqual({ balance: usd('6'), reserved: usd('2'), available: usd('4'), debt: 0n });
    run.event('j1', 'job.completed', gpu(700)); // 1.400000: promo's 1.0, then paid's 0.4
    expect(run.grantView('promo')).toEqual({ remaining: 0n, held: 0n, status: 'depleted' });
    expect(run.grantView('paid')).toEqual({ remaining: usd('4.6'), held: 0n, status: 'active' });
    expect(run.job('j1')).toMatchObject({ state: 'captured', reserved: usd('2'), captured: usd('1.4'), released: usd('0.6') });
    expect(run.wallet().spentToday).toBe(usd('1.4'));
  });

  it('an expired grant funds nothing; its unheld remaining leaves, its held share may still be captured, and what the job returns to it leaves', () => {
    const run = new Run().grant('soon', '2.0', { expiresInMs: 60 * SECOND }).credit('paid', '2.0');
    run.submit('j1', gpu(500)); // 1.0 from 'soon' (the expiring grant comes first)
    expect(run.grantView('soon').held).toBe(usd('1.0'));
    run.check(T0 + 75 * SECOND);
    expect(run.grantView('soon')).toEqual({ remaining: usd('1.0'), held: usd('1.0'), status: 'expired' });
    expect(money(run.wallet())).toEqual({ balance: usd('3.0'), reserved: usd('1.0'), available: usd('2.0'), debt: 0n });
    run.submit('j2', gpu(250)); // 0.5, from 'paid' only
    expect(run.grantView('paid').held).toBe(usd('0.5'));
    run.event('j1', 'job.completed', gpu(300)); // 0.6 captured from 'soon'; its 0.4 returned leaves at once
    expect(run.grantView('soon')).toEqual({ remaining: 0n, held: 0n, status: 'expired' });
    expect(money(run.wallet())).toEqual({ balance: usd('2.0'), reserved: usd('0.5'), available: usd('1.5'), debt: 0n });
  });

  it('a void takes the unheld remaining at once; a share returned to the voided grant leaves; a second void is 409', () => {
    const run = new Run().grant('v', '3.0', { category: 'paid', priority: 10 }).credit('paid', '1.0').submit('j1', gpu(1000));
    run.do({ kind: 'void_grant', wallet: 'w1', grant: 'v' });
    expect(run.grantView('v')).toEqual({ remaining: usd('2.0'), held: usd('2.0'), status: 'voided' });
    expect(money(run.wallet())).toEqual({ balance: usd('3.0'), reserved: usd('2.0'), available: usd('1.0'), debt: 0n });
    run.do({ kind: 'void_grant', wallet: 'w1', grant: 'v' }, { status: 409, code: 'grant_voided' });
    run.event('j1', 'job.failed', gpu(10)); // the default policy releases
    expect(run.grantView('v')).toEqual({ remaining: 0n, held: 0n, status: 'voided' });
    expect(run.job('j1')).toMatchObject({ state: 'released', captured: 0n, released: usd('2.0') });
    expect(money(run.wallet())).toEqual({ balance: usd('1.0'), reserved: 0n, available: usd('1.0'), debt: 0n });
  });

  it('a charge beyond the grants is debt; the next money that enters pays it first', () => {
    const run = new Run().credit('c', '1.0').submit('j1', gpu(500)).event('j1', 'job.completed', gpu(200)); // 0.4 captured, 0.6 back
    run.submit('j2', gpu(300)); // holds the 0.6 left
    run.event('j1', 'job.usage_corrected', gpu(500), 1); // billable 1.0: +0.6, nothing unheld: debt
    expect(run.job('j1')).toMatchObject({ captured: usd('0.4'), adjusted: usd('0.6') });
    expect(money(run.wallet())).toEqual({ balance: 0n, reserved: usd('0.6'), available: usd('-0.6'), debt: usd('0.6') });
    run.submit('j3', gpu(1), null, { status: 402, code: 'insufficient_funds' });
    run.credit('d', '1.0');
    expect(run.grantView('d')).toEqual({ remaining: usd('0.4'), held: 0n, status: 'active' });
    expect(money(run.wallet())).toEqual({ balance: usd('1.0'), reserved: usd('0.6'), available: usd('0.4'), debt: 0n });
  });

  it('a credit that only pays debt leaves its grant depleted', () => {
    const run = new Run().credit('c', '1.0').submit('j1', gpu(500)).event('j1', 'job.completed', gpu(0));
    run.submit('j2', gpu(500)).event('j1', 'job.usage_corrected', gpu(250), 1).credit('d', '0.5');
    expect(run.grantView('d')).toEqual({ remaining: 0n, held: 0n, status: 'depleted' });
    expect(run.wallet().debt).toBe(0n);
  });
});

describe('corrections', () => {
  it('up draws in draw-down order; down undoes the latest consumption first: the adjustment, then the capture from its last share', () => {
    const run = new Run().grant('promo', '0.5', { priority: 10 }).credit('paid', '5.0');
    run.submit('j1', gpu(1000)).event('j1', 'job.completed', gpu(500)); // 1.0: promo 0.5, paid 0.5
    expect([run.grantView('promo').remaining, run.grantView('paid').remaining]).toEqual([0n, usd('4.5')]);
    run.event('j1', 'job.usage_corrected', gpu(750), 1); // 1.5: +0.5 from paid (promo has nothing)
    expect(run.grantView('paid').remaining).toBe(usd('4.0'));
    run.event('j1', 'job.usage_corrected', gpu(100), 2); // 0.2: −1.3 = paid 0.5 (the draw), paid 0.5, promo 0.3
    expect(run.grantView('paid').remaining).toBe(usd('5.0'));
    expect(run.grantView('promo')).toEqual({ remaining: usd('0.3'), held: 0n, status: 'active' });
    expect(run.job('j1')).toMatchObject({ state: 'captured', captured: usd('1.0'), adjusted: usd('-0.8') });
    expect(run.wallet().spentToday).toBe(usd('0.2'));
    // stale: at or below the highest applied, whatever it says
    run.event('j1', 'job.usage_corrected', gpu(900), 2).event('j1', 'job.usage_corrected', gpu(900), 1);
    expect(run.job('j1').adjusted).toBe(usd('-0.8'));
  });

  it('a correction before the completion is the completion, and a correction is billed only up to the hold', () => {
    const run = new Run().credit('c', '5.0').submit('j1', gpu(500)).event('j1', 'job.usage_corrected', gpu(400), 3);
    expect(run.job('j1')).toMatchObject({ state: 'captured', captured: usd('0.8'), released: usd('0.2') });
    run.event('j1', 'job.usage_corrected', gpu(900), 4); // billable min(1.8, 1.0) = 1.0
    expect(run.job('j1').adjusted).toBe(usd('0.2'));
    run.event('j1', 'job.completed', gpu(9000)); // a second completion never bills
    expect(run.wallet().balance).toBe(usd('4.0'));
  });

  it('a released job takes no correction, no completion', () => {
    const run = new Run().credit('c', '5.0').submit('j1', gpu(500)).event('j1', 'job.canceled');
    run.event('j1', 'job.completed', gpu(100)).event('j1', 'job.usage_corrected', gpu(100), 1);
    expect(run.job('j1')).toMatchObject({ state: 'released', captured: 0n, released: usd('1.0'), adjusted: 0n });
    expect(run.wallet().balance).toBe(usd('5.0'));
  });
});

describe('lifecycle', () => {
  it('started → running; cancel → cancel_requested (again: 202); a canceled event with usage captures; then cancel is 409', () => {
    const run = new Run().credit('c', '5.0').submit('j1', gpu(500)).event('j1', 'job.started');
    expect(run.job('j1').state).toBe('running');
    run.cancel('j1').cancel('j1').event('j1', 'job.progress', gpu(10));
    expect(run.job('j1').state).toBe('cancel_requested');
    run.event('j1', 'job.canceled', gpu(100));
    expect(run.job('j1')).toMatchObject({ state: 'captured', captured: usd('0.2'), released: usd('0.8') });
    run.cancel('j1', { status: 409, code: 'job_terminal' });
  });

  it("a cancel's grace running out releases the hold", () => {
    const run = new Run({ cancelGraceMs: 300 * SECOND }).credit('c', '5.0').submit('j1', gpu(500)).cancel('j1');
    const cancelledAt = run.at;
    run.check(cancelledAt + 299 * SECOND);
    expect(run.job('j1').state).toBe('cancel_requested');
    run.check(cancelledAt + 320 * SECOND);
    expect(run.job('j1')).toMatchObject({ state: 'released', released: usd('1.0') });
    expect(money(run.wallet())).toEqual({ balance: usd('5.0'), reserved: 0n, available: usd('5.0'), debt: 0n });
  });

  it('ops on a job whose submission was refused are 404; a completion without usage is 400', () => {
    const run = new Run().credit('c', '0.5').submit('j1', gpu(500), null, { status: 402, code: 'insufficient_funds' });
    run.event('j1', 'job.completed', gpu(1), undefined, { status: 404, code: 'unknown_job' });
    run.cancel('j1', { status: 404, code: 'not_found' });
    expect(run.model.jobs().has('j1')).toBe(false);
    run.submit('j2', gpu(100)).event('j2', 'job.completed', undefined, undefined, { status: 400, code: 'invalid_payload' });
    expect(run.job('j2').state).toBe('reserved');
  });
});

describe('spend limits', () => {
  it('a reservation past the day limit is 402 spend_limit_reached; funds are checked first; a release gives its amount back', () => {
    const run = new Run().credit('c', '10.0').do({ kind: 'spend_limit', tenant: 't1', wallet: 'w1', amount: usd('1.5') });
    run.submit('j1', gpu(600)); // 1.2
    run.submit('j2', gpu(300), null, { status: 402, code: 'spend_limit_reached' }); // 1.2 + 0.6 > 1.5
    run.submit('j3', gpu(10_000), null, { status: 402, code: 'insufficient_funds' }); // 20.0: funds first
    run.extend('j1', gpu(300), { status: 402, code: 'spend_limit_reached' });
    expect(run.wallet().spentToday).toBe(usd('1.2'));
    run.event('j1', 'job.failed');
    expect(run.wallet().spentToday).toBe(0n);
    run.submit('j2b', gpu(750)); // exactly 1.5: allowed
    run.do({ kind: 'spend_limit', tenant: 't1', wallet: 'w1', amount: usd('2.0') }, { status: 200 });
    run.event('j2b', 'job.completed', gpu(100)); // keeps 0.2
    expect(run.wallet().spentToday).toBe(usd('0.2'));
  });

  it("a capture counts on its own day; the hold is given back to the first hold's day", () => {
    const run = new Run().credit('c', '10.0');
    run.submit('j1', gpu(600), auto(300, 1200)); // day 1: 1.2
    run.do({
      kind: 'event',
      wallet: 'w1',
      job: 'j1',
      type: 'job.progress',
      usage: gpu(400),
      copies: 1,
      reemit: false,
      forged: false,
      conflicting: false,
    });
    expect(run.wallet().spentToday).toBe(usd('1.8')); // + the extension's 0.6
    run.check(Date.UTC(2026, 11, 3, 1, 0, 0));
    expect(run.wallet().spentToday).toBe(0n);
    run.event('j1', 'job.completed', gpu(500)); // day 2: +1.0 captured; day 1 gives back 1.8
    expect(run.wallet().spentToday).toBe(usd('1.0'));
  });
});

describe('hold extensions', () => {
  it('an automatic extension refused for funds leaves the hold exhausted; the next report, once funded, extends and clears it', () => {
    const run = new Run().credit('c', '1.5').submit('j1', gpu(600), auto(300, 1800));
    run.event('j1', 'job.progress', gpu(400)); // target 700: +300 = 0.6 > available 0.3
    expect(run.job('j1')).toMatchObject({
      state: 'running',
      limits: gpu(600),
      reserved: usd('1.2'),
      extensions: [],
      usageSoFar: gpu(400),
      holdExhausted: { reason: 'insufficient_funds', reserved: usd('1.2'), usagePrice: usd('0.8') },
    });
    run.credit('d', '1.0').event('j1', 'job.progress', gpu(350)); // usage so far stays 400
    expect(run.job('j1')).toMatchObject({
      limits: gpu(900),
      reserved: usd('1.8'),
      extensions: [{ version: 1, amount: usd('0.6'), source: 'auto' }],
      usageSoFar: gpu(400),
      holdExhausted: null,
    });
    expect(money(run.wallet())).toEqual({ balance: usd('2.5'), reserved: usd('1.8'), available: usd('0.7'), debt: 0n });
  });

  it('an automatic extension past the day limit is refused whole: reason spend_limit', () => {
    const run = new Run().credit('c', '10.0').do({ kind: 'spend_limit', tenant: 't1', wallet: 'w1', amount: usd('1.5') });
    run.submit('j1', gpu(600), auto(300, 1800)).event('j1', 'job.progress', gpu(400));
    expect(run.job('j1').holdExhausted).toEqual({ reason: 'spend_limit', reserved: usd('1.2'), usagePrice: usd('0.8') });
    expect(run.job('j1').limits).toEqual(gpu(600));
  });

  it('a completion beyond what the grants can hold is held against the debt, and its captured part is debt; a refund undoes that part first', () => {
    const run = new Run().credit('c', '1.5').submit('j1', gpu(600), auto(300, 1800));
    run.do({ kind: 'spend_limit', tenant: 't1', wallet: 'w1', amount: usd('1.3') }); // never stops delivered work
    run.event('j1', 'job.completed', gpu(1000)); // limits 1200: +1.2 (0.3 from c, 0.9 against the debt); captures 2.0
    expect(run.job('j1')).toMatchObject({
      state: 'captured',
      limits: gpu(1200),
      reserved: usd('2.4'),
      captured: usd('2.0'),
      released: usd('0.4'),
      extensions: [{ version: 1, amount: usd('1.2'), source: 'auto' }],
      holdExhausted: null,
    });
    expect(money(run.wallet())).toEqual({ balance: usd('-0.5'), reserved: 0n, available: usd('-0.5'), debt: usd('0.5') });
    expect(run.wallet().spentToday).toBe(usd('2.0'));
    run.event('j1', 'job.usage_corrected', gpu(900), 1); // 1.8: −0.2, from the debt's part
    expect(money(run.wallet())).toEqual({ balance: usd('-0.3'), reserved: 0n, available: usd('-0.3'), debt: usd('0.3') });
    expect(run.grantView('c').remaining).toBe(0n);
  });

  it('in cancel_requested the target is the usage so far, without a step; a failure releases and never extends', () => {
    const run = new Run().credit('c', '10.0').submit('j1', gpu(600), auto(300, 1800)).cancel('j1');
    run.event('j1', 'job.progress', gpu(600));
    expect(run.job('j1')).toMatchObject({ limits: gpu(600), extensions: [], holdExhausted: null });
    run.event('j1', 'job.progress', gpu(601)); // 601 > 600: one step
    expect(run.job('j1')).toMatchObject({ limits: gpu(900), reserved: usd('1.8') });
    run.event('j1', 'job.failed', gpu(5000));
    expect(run.job('j1')).toMatchObject({ state: 'released', released: usd('1.8'), extensions: [{ version: 1 }] });
  });

  it('without auto_extend: exhausted with reason null when the usage so far costs more than the hold; a tenant extension re-checks it', () => {
    const run = new Run().credit('c', '10.0').submit('j1', gpu(600)).event('j1', 'job.progress', gpu(700));
    expect(run.job('j1').holdExhausted).toEqual({ reason: null, reserved: usd('1.2'), usagePrice: usd('1.4') });
    run.extend('j1', gpu(50)); // 1.3: still short, a new finding at the new reserved
    expect(run.job('j1').holdExhausted).toEqual({ reason: null, reserved: usd('1.3'), usagePrice: usd('1.4') });
    run.extend('j1', gpu(50));
    expect(run.job('j1')).toMatchObject({
      holdExhausted: null,
      limits: gpu(700),
      extensions: [
        { version: 1, amount: usd('0.1'), source: 'api' },
        { version: 2, amount: usd('0.1'), source: 'api' },
      ],
    });
  });

  it('a tenant extension on a terminal job is 409, on an unfundable one 402, and an add of unpriced units is 422', () => {
    const run = new Run().credit('c', '1.5').submit('j1', gpu(600));
    run.extend('j1', gpu(300), { status: 402, code: 'insufficient_funds' });
    run.extend('j1', { frames: 10 }, { status: 422, code: 'invalid_limits' });
    run.extend('j1', { input_tokens: 1000 }); // 0.003
    expect(run.job('j1')).toMatchObject({ reserved: usd('1.203'), limits: { gpu_seconds: 600, input_tokens: 1000 } });
    run.event('j1', 'job.completed', gpu(10)).extend('j1', gpu(1), { status: 409, code: 'job_terminal' });
  });
});

describe('races', () => {
  const started = () => new Run().credit('c', '10.0').submit('j1', gpu(600));
  const race = (answer: Partial<Answer>, run = started()) =>
    run.do({ kind: 'race_extend_complete', wallet: 'w1', job: 'j1', add: gpu(300), usage: gpu(850) }, answer);

  it('extension and completion: 201 captures from the grown hold', () => {
    expect(race({ status: 201 }).job('j1')).toMatchObject({
      reserved: usd('1.8'),
      captured: usd('1.7'),
      released: usd('0.1'),
      extensions: [{ version: 1, source: 'api' }],
    });
  });

  it('extension and completion: 409 job_terminal captures from the hold as it was', () => {
    const run = race({ status: 409, code: 'job_terminal' });
    expect(run.job('j1')).toMatchObject({ state: 'captured', reserved: usd('1.2'), captured: usd('1.2'), released: 0n, extensions: [] });
    expect(run.wallet().balance).toBe(usd('8.8'));
  });

  it('extension and completion on a wallet that cannot fund the extension: 402 or 409, never 201', () => {
    const poor = () => new Run().credit('c', '1.5').submit('j1', gpu(600));
    expect(race({ status: 402, code: 'insufficient_funds' }, poor()).job('j1').captured).toBe(usd('1.2'));
    expect(race({ status: 409, code: 'job_terminal' }, poor()).job('j1').captured).toBe(usd('1.2'));
    expect(() => race({ status: 201 }, poor())).toThrow(ModelDisagrees);
  });

  it('cancel and completion: 202 or 409, captured with the usage either way; on a terminal job only 409', () => {
    for (const answer of [{ status: 202 }, { status: 409, code: 'job_terminal' }]) {
      const run = started().do({ kind: 'race_cancel_complete', wallet: 'w1', job: 'j1', usage: gpu(500) }, answer);
      expect(run.job('j1')).toMatchObject({ state: 'captured', captured: usd('1.0'), released: usd('0.2') });
    }
    const ended = started().event('j1', 'job.completed', gpu(1));
    expect(() => ended.do({ kind: 'race_cancel_complete', wallet: 'w1', job: 'j1', usage: gpu(500) }, { status: 202 })).toThrow(
      ModelDisagrees,
    );
  });
});

describe('answers the contract forbids', () => {
  it('a 201 where the model says 402, a 402 where it says 201, another 402 code: ModelDisagrees, and nothing changes', () => {
    const run = new Run().credit('c', '1.0');
    const before = run.wallet();
    expect(() => run.submit('j1', gpu(600))).toThrow(ModelDisagrees);
    expect(() => run.submit('j2', gpu(100), null, { status: 402, code: 'insufficient_funds' })).toThrow(/contract expects 201/);
    expect(() => run.submit('j3', gpu(600), null, { status: 402, code: 'spend_limit_reached' })).toThrow(/402 insufficient_funds/);
    expect(run.wallet()).toEqual(before);
    expect(run.model.jobs().size).toBe(0);
  });

  it('a 202 to a cancel of a captured job, a 200 to a second void: ModelDisagrees', () => {
    const run = new Run().credit('c', '5.0').submit('j1', gpu(100)).event('j1', 'job.completed', gpu(100));
    expect(() => run.cancel('j1')).toThrow(ModelDisagrees);
    run.do({ kind: 'void_grant', wallet: 'w1', grant: 'c' });
    expect(() => run.do({ kind: 'void_grant', wallet: 'w1', grant: 'c' })).toThrow(/409 grant_voided/);
  });
});

describe("docs/long-running-jobs.md's worked example, as ops", () => {
  it('2.400000 held and 2.200000 captured; 1.760000 captured after the cancel; a 4.340000 balance', () => {
    const run = new Run().credit('c', '10.00');
    // A job that grows twice, then completes; each report delivered twice.
    run.submit('job', gpu(600), auto(300, 1800));
    run.event('job', 'job.progress', gpu(400)).event('job', 'job.progress', gpu(750)).event('job', 'job.completed', gpu(1100));
    expect(run.job('job')).toMatchObject({
      state: 'captured',
      reserved: usd('2.4'),
      captured: usd('2.2'),
      released: usd('0.2'),
      extensions: [
        { version: 1, amount: usd('0.6'), source: 'auto' },
        { version: 2, amount: usd('0.6'), source: 'auto' },
      ],
    });
    // A job that runs out at max_limits and is cancelled.
    run.submit('job2', gpu(600), auto(300, 900)).event('job2', 'job.progress', gpu(400)).event('job2', 'job.progress', gpu(700));
    expect(run.job('job2').holdExhausted).toEqual({ reason: 'max_limits', reserved: usd('1.8'), usagePrice: usd('1.4') });
    run.cancel('job2').event('job2', 'job.canceled', gpu(880));
    expect(run.job('job2')).toMatchObject({ state: 'captured', captured: usd('1.76'), released: usd('0.04'), holdExhausted: null });
    // A tenant's own extension, for a job without auto_extend.
    run.submit('job3', gpu(600)).extend('job3', gpu(300));
    expect(run.job('job3').reserved).toBe(usd('1.8'));
    run.event('job3', 'job.completed', gpu(850));
    expect(run.job('job3').captured).toBe(usd('1.7'));
    expect(money(run.wallet())).toEqual({ balance: usd('4.34'), reserved: 0n, available: usd('4.34'), debt: 0n });
  });
});

describe('payments', () => {
  it('a paid checkout activates its grant and pays the debt first; an expired one is canceled and brings nothing', () => {
    const run = new Run().credit('c', '1.0').submit('j1', gpu(500)).event('j1', 'job.completed', gpu(0));
    run.submit('j2', gpu(500)).event('j1', 'job.usage_corrected', gpu(250), 1); // 0.5 of debt
    run.checkout('p1', '2.00');
    expect(run.grantView('p1')).toEqual({ remaining: usd('1.5'), held: 0n, status: 'active' });
    run.checkout('p2', '3.00', { paid: false });
    expect(run.grantView('p2')).toEqual({ remaining: 0n, held: 0n, status: 'canceled' });
    expect(money(run.wallet())).toEqual({ balance: usd('2.5'), reserved: usd('1.0'), available: usd('1.5'), debt: 0n });
  });

  it('a checkout of less than 0.50 or of a fraction of a cent is 400 invalid_amount', () => {
    const run = new Run();
    expect(() => run.checkout('p1', '0.49')).toThrow(ModelDisagrees);
    const refused = { status: 400, code: 'invalid_amount' };
    run.checkout('p2', '0.49', {}, refused).checkout('p3', '1.005', {}, refused).checkout('p4', '0.50');
    expect([...run.wallet().grants.keys()]).toEqual(['p4']);
  });

  it("a refund takes the grant's unheld remaining, the rest is debt; a failed one is credited back", () => {
    const run = new Run().checkout('p1', '2.00').submit('j1', gpu(750)); // 1.5 held of p1
    run.do({ kind: 'refund', wallet: 'w1', grant: 'p1', amount: usd('1.00'), fails: false, delivery: DELIVERY });
    expect(run.grantView('p1')).toEqual({ remaining: usd('1.5'), held: usd('1.5'), status: 'active' });
    expect(run.wallet().debt).toBe(usd('0.5'));
    run.do({ kind: 'refund', wallet: 'w1', grant: 'p1', amount: usd('0.30'), fails: true, delivery: DELIVERY });
    expect(money(run.wallet())).toEqual({ balance: usd('1.0'), reserved: usd('1.5'), available: usd('-0.5'), debt: usd('0.5') });
  });

  it('an open dispute freezes the grant (no new hold from it); lost, its amount leaves like a refund; won, it only unfreezes', () => {
    const run = new Run().checkout('p1', '2.00').credit('c', '1.0');
    run.do({ kind: 'dispute_open', wallet: 'w1', grant: 'p1', amount: usd('0.80'), delivery: DELIVERY });
    expect(run.grantView('p1').status).toBe('disputed');
    expect(run.wallet().available).toBe(usd('1.0'));
    run.submit('j1', gpu(600), null, { status: 402, code: 'insufficient_funds' }); // 1.2: only c funds
    run.do({ kind: 'dispute_close', wallet: 'w1', grant: 'p1', outcome: 'lost', delivery: DELIVERY });
    expect(run.grantView('p1')).toEqual({ remaining: usd('1.2'), held: 0n, status: 'active' });
    run.do({ kind: 'dispute_open', wallet: 'w1', grant: 'p1', amount: usd('1.20'), delivery: DELIVERY });
    run.do({ kind: 'dispute_close', wallet: 'w1', grant: 'p1', outcome: 'won', delivery: DELIVERY });
    expect(run.grantView('p1')).toEqual({ remaining: usd('1.2'), held: 0n, status: 'active' });
  });

  it("a return to a disputed grant stays frozen there: it pays no debt until the dispute is over", () => {
    const run = new Run().checkout('p1', '2.00').submit('j1', gpu(500)); // 1.0 held of p1
    run.do({ kind: 'refund', wallet: 'w1', grant: 'p1', amount: usd('1.50'), fails: false, delivery: DELIVERY }); // 1.0 unheld taken, 0.5 debt
    run.do({ kind: 'dispute_open', wallet: 'w1', grant: 'p1', amount: usd('0.50'), delivery: DELIVERY });
    run.event('j1', 'job.failed'); // the 1.0 share returns to p1, frozen
    expect(run.grantView('p1')).toEqual({ remaining: usd('1.0'), held: 0n, status: 'disputed' });
    expect(money(run.wallet())).toEqual({ balance: usd('0.5'), reserved: 0n, available: usd('-0.5'), debt: usd('0.5') });
  });

  it('a hold that leaves available below the threshold decides one recharge of target − available, rounded up to the cent', () => {
    const run = new Run().checkout('p1', '5.00').autoRecharge('3.00', '10.00');
    run.submit('j1', gpu(1_001)); // 2.002 held: 2.998 available
    expect(run.recharges()).toEqual([{ amount: usd('7.01'), status: 'active' }]);
    expect(run.wallet().available).toBe(usd('10.008'));
    run.autoRecharge('3.00', '2.00', null, { status: 400, code: 'invalid_auto_recharge' });
  });

  it('without a card (no paid checkout) nothing is decided; at least the 0.50 minimum; within the monthly limit, else skipped', () => {
    const noCard = new Run().credit('c', '5.0').autoRecharge('3.00', '3.10');
    noCard.submit('j1', gpu(1_500));
    expect(noCard.recharges()).toEqual([]);
    const run = new Run().checkout('p1', '5.00').autoRecharge('3.00', '3.10', '0.80');
    run.submit('j1', gpu(1_000)); // 3.00 available: not below
    expect(run.recharges()).toEqual([]);
    run.submit('j2', gpu(50)); // 2.90: 0.20 → the 0.50 minimum
    run.submit('j3', gpu(500)); // 2.50 after j3 (3.40 − 0.90…): 0.60, but 0.30 left this month: skipped
    expect(run.recharges()).toEqual([{ amount: usd('0.50'), status: 'active' }]);
  });

  it('a declined recharge is canceled; the next lowering posting tries again; three declines in a row turn it off', () => {
    const run = new Run().checkout('p1', '20.00').autoRecharge('19.90', '25.00');
    run.do({ kind: 'card', wallet: 'w1', card: 'pm_1', declines: true });
    for (const job of ['j1', 'j2', 'j3', 'j4']) run.submit(job, gpu(100));
    expect(run.recharges().map((r) => r.status)).toEqual(['canceled', 'canceled', 'canceled']);
    run.do({ kind: 'card', wallet: 'w1', card: 'pm_1', declines: false });
    run.submit('j5', gpu(100));
    expect(run.recharges()).toHaveLength(3);
    run.autoRecharge('19.90', '25.00').submit('j6', gpu(100));
    expect(run.recharges().at(-1)).toEqual({ amount: usd('6.20'), status: 'active' });
  });

  it('a race of submissions fits only when one recharge at most can be due, and decides it at the first crossing', () => {
    const run = new Run().checkout('p1', '10.00').autoRecharge('9.50', '12.00');
    const race: Op = { kind: 'race_submits', wallet: 'w1', jobs: ['r1', 'r2', 'r3'], limits: gpu(250) };
    expect(run.model.raceFits(race, run.at)).toBe(true);
    run.do(race);
    // 0.5 each: 9.5 after the first (not below), 9.0 after the second: 3.00; all released
    expect(run.recharges()).toEqual([{ amount: usd('3.00'), status: 'active' }]);
    expect(run.job('r3')).toMatchObject({ state: 'released', released: usd('0.5') });
    expect(run.model.raceFits({ ...race, limits: gpu(5_000) }, run.at)).toBe(false); // 10.0 each: not all fit
  });
});
