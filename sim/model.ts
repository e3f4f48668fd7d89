import { Funds, Spend } from './model-funds.js';
import {
  extendByRequest,
  invalidAdd,
  invalidEvent,
  invalidLimits,
  isTerminal,
  priceOfAdd,
  refusalOf,
  release,
  reserve,
  settle,
  type Books,
  type Job,
} from './model-jobs.js';
import { MAX_AMOUNT, formatMicros, price } from './model-money.js';
import type { Answer, Op, Usage } from './ops.js';

/**
 * The simulation's independent reference model (issue 36): what the contract says every
 * op does, applied as Tally answered it. Written from docs/CONTRACT.md, the outside
 * contract and docs/long-running-jobs.md; it imports nothing from src/ — no pricing, no
 * money, no lifecycle, no funds code — so that a bug there cannot hide here as well.
 *
 * For each op the model works out the answers the contract allows in its state; an
 * answer outside them throws ModelDisagrees. Where the contract allows more than one
 * (the `race_*` ops) Tally's answer says which order the job's lock chose, and the model
 * follows it. Time-driven effects (a grant's expiry, a cancel's grace running out) are
 * applied lazily, in the order of their instants, before the next op of their wallet.
 */

export class ModelDisagrees extends Error {
  override readonly name = 'ModelDisagrees';
}

export interface ExpectedWallet {
  balance: bigint;
  reserved: bigint;
  available: bigint;
  debt: bigint;
  /** by sim name; a recharge's grant is named `<wallet>:recharge:<n>` (the wallet's n-th, in creation order) */
  grants: Map<string, { amount: bigint; remaining: bigint; held: bigint; status: string }>;
  spentToday: bigint;
}

export interface ExpectedJob {
  state: string;
  reserved: bigint;
  captured: bigint;
  released: bigint;
  adjusted: bigint;
  limits: Usage;
  extensions: { version: number; amount: bigint; source: 'api' | 'auto' }[];
  holdExhausted: { reason: string | null; reserved: bigint; usagePrice: bigint } | null;
  usageSoFar: Usage | null;
}

export interface ModelOptions {
  /**
   * The generic provider's `cancel_grace_seconds`, in ms (default 300 s): a job still in
   * `cancel_requested` that long after the tenant's cancel is released. The duty runs at
   * least every 10 s, so the driver keeps a job's ops off the 10 s after that instant.
   */
  cancelGraceMs?: number;
}

/** An answer the contract allows, and why (for the message when Tally answered otherwise). */
interface Outcome {
  status: number;
  code?: string;
  why: string;
}

/** A tenant's one wallet: its money, the tenant's spend and day limit. */
interface Wallet extends Books {
  readonly name: string;
  readonly tenant: string;
  dayLimit: bigint | null;
  /** the payment method of the tenant's latest successful checkout (what a recharge charges) */
  card: string | null;
  autoRecharge: { enabled: boolean; threshold: bigint; target: bigint; monthlyLimit: bigint | null; failures: number } | null;
  /** the recharge in flight: its grant (named `<wallet>:recharge:<n>`), amount, month and the card it charges */
  recharge: { grant: string; amount: bigint; month: string; card: string } | null;
  recharges: number;
  /** what recharges took (or hold in flight) per UTC month ("2026-12") */
  rechargedByMonth: Map<string, bigint>;
  /** the instant up to which time-driven effects have been applied */
  clock: number;
}

const ok = (status: number, why: string): Outcome => ({ status, why });
const refused = (status: number, code: string, why: string): Outcome => ({ status, code, why });
const TERMINAL = refused(409, 'job_terminal', 'the job is captured or released');
/** Stripe's minimum charge in USD, and its minor unit, in micro-units */
const STRIPE_MINIMUM = 500_000n;
const MINOR_UNIT = 10_000n;
/** `amount` rounded up to a multiple of `unit` (amount ≥ 0) */
const ceilTo = (amount: bigint, unit: bigint) => ((amount + unit - 1n) / unit) * unit;
const NOT_FOUND = (what: string) => refused(404, '', `Tally refused to create ${what}: it does not exist`);

export class Model {
  private readonly cancelGraceMs: number;
  private readonly walletsByName = new Map<string, Wallet>();
  private readonly jobsByName = new Map<string, Job>();
  /** jobs and grants whose creation Tally refused (402, 400, 422): later ops naming them find nothing */
  private readonly refusedNames = new Set<string>();
  private grantSeq = 0;
  /** each open dispute's amount, by grant */
  private readonly disputes = new Map<string, bigint>();
  /** how each card fares in a recharge (unlisted: it pays) */
  private readonly cardDeclines = new Map<string, boolean>();
  private now = 0;

  constructor(options: ModelOptions = {}) {
    this.cancelGraceMs = options.cancelGraceMs ?? 300_000;
  }

  /** Applies an op as Tally answered it; throws ModelDisagrees when the contract does not allow that answer in the model's state. */
  apply(op: Op, answer: Answer, atMs: number): void {
    this.now = Math.max(this.now, atMs);
    this.applyOp(op, answer, atMs);
    // a recharge the op decided is resolved before the wallet's next op (the driver waits for it)
    if ('wallet' in op) this.settleRecharge(this.walletsByName.get(op.wallet)!, atMs);
  }

  private applyOp(op: Op, answer: Answer, atMs: number): void {
    switch (op.kind) {
      case 'tenant':
        return this.tenant(op, answer);
      case 'credit':
        return this.addGrant(op, answer, atMs, { category: 'paid', priority: 50, expiresInMs: null });
      case 'grant':
        return this.addGrant(op, answer, atMs, op);
      case 'void_grant':
        return this.voidGrant(op, answer, atMs);
      case 'spend_limit':
        return this.spendLimit(op, answer, atMs);
      case 'submit':
        return this.submit(op, answer, atMs);
      case 'event':
        return this.event(op, answer, atMs);
      case 'extend':
        return this.extend(op, answer, atMs);
      case 'cancel':
        return this.cancel(op, answer, atMs);
      case 'race_extend_complete':
        return this.raceExtendComplete(op, answer, atMs);
      case 'race_cancel_complete':
        return this.raceCancelComplete(op, answer, atMs);
      case 'checkout':
        return this.checkout(op, answer, atMs);
      case 'refund':
        return this.refund(op, answer, atMs);
      case 'dispute_open':
      case 'dispute_close':
        return this.dispute(op, answer, atMs);
      case 'card':
        agree(op, answer, [ok(200, "the card's behaviour is Stripe's, not Tally's")]);
        this.cardDeclines.set(op.card, op.declines);
        return;
      case 'auto_recharge':
        return this.autoRecharge(op, answer, atMs);
      case 'dead_letter':
        return this.deadLetter(op, answer, atMs);
      case 'race_submits':
        return this.raceSubmits(op, answer, atMs);
      case 'check':
        for (const wallet of this.walletsByName.values()) this.advance(wallet, atMs);
        return;
    }
  }

  /** What Tally's wallet views must say at a quiescent point (as of the latest op), by sim wallet name. */
  wallets(): Map<string, ExpectedWallet> {
    const at = this.now;
    const views = new Map<string, ExpectedWallet>();
    for (const w of this.walletsByName.values()) {
      const grants = new Map(
        w.funds.all().map((g) => [g.name, { amount: g.amount, remaining: g.remaining, held: g.held, status: w.funds.status(g, at) }]),
      );
      const { funds } = w;
      views.set(w.name, {
        balance: funds.balance(),
        reserved: funds.reserved(),
        available: funds.available(at),
        debt: funds.debt,
        grants,
        spentToday: w.spend.on(at),
      });
    }
    return views;
  }

  /** What Tally's job views must say at a quiescent point, by sim job name. */
  jobs(): Map<string, ExpectedJob> {
    const views = new Map<string, ExpectedJob>();
    for (const job of this.jobsByName.values()) {
      views.set(job.name, {
        state: job.state,
        reserved: job.reserved,
        captured: job.captured,
        released: job.released,
        adjusted: job.adjusted,
        limits: { ...job.limits },
        extensions: job.extensions.map((e) => ({ ...e })),
        holdExhausted: job.holdExhausted === null ? null : { ...job.holdExhausted },
        usageSoFar: job.usageSoFar === null ? null : { ...job.usageSoFar },
      });
    }
    return views;
  }

  private tenant(op: Extract<Op, { kind: 'tenant' }>, answer: Answer): void {
    agree(op, answer, [ok(201, 'a new tenant and its wallet')]);
    const wallet: Wallet = {
      name: op.wallet,
      tenant: op.tenant,
      funds: new Funds(),
      spend: new Spend(),
      dayLimit: null,
      card: null,
      autoRecharge: null,
      recharge: null,
      recharges: 0,
      rechargedByMonth: new Map(),
      clock: 0,
    };
    wallet.funds.lowered = (at) => this.maybeRecharge(wallet, at);
    this.walletsByName.set(op.wallet, wallet);
  }

  /** PUT …/auto-recharge: target above threshold, else 400; `enabled: true` resets the failures. */
  private autoRecharge(op: Extract<Op, { kind: 'auto_recharge' }>, answer: Answer, atMs: number): void {
    const w = this.walletAt(op.wallet, atMs);
    const valid = op.target > op.threshold;
    agree(op, answer, [valid ? ok(200, 'the settings are replaced') : refused(400, 'invalid_auto_recharge', 'target must exceed threshold')]);
    if (!valid) return;
    const failures = op.enabled ? 0 : (w.autoRecharge?.failures ?? 0);
    w.autoRecharge = { enabled: op.enabled, threshold: op.threshold, target: op.target, monthlyLimit: op.monthlyLimit, failures };
  }

  /**
   * After a posting that lowered `available`: below the threshold with no recharge in flight
   * (and a card known), one recharge is decided — target − available, rounded up to the
   * cent, at least Stripe's minimum, within the month's limit counting what is in flight
   * (skipped when that leaves less than the minimum) — a grant awaiting its payment.
   */
  private maybeRecharge(w: Wallet, at: number): void {
    const rule = w.autoRecharge;
    if (rule === null || !rule.enabled || w.card === null || w.recharge !== null) return;
    const available = w.funds.available(at);
    if (available >= rule.threshold) return;
    let amount = ceilTo(rule.target - available, MINOR_UNIT);
    if (amount < STRIPE_MINIMUM) amount = STRIPE_MINIMUM;
    const month = new Date(at).toISOString().slice(0, 7);
    if (rule.monthlyLimit !== null) {
      const room = rule.monthlyLimit - (w.rechargedByMonth.get(month) ?? 0n);
      const roomMinor = room > 0n ? room - (room % MINOR_UNIT) : 0n;
      if (amount > roomMinor) amount = roomMinor;
      if (amount < STRIPE_MINIMUM) return;
    }
    const grant = `${w.name}:recharge:${++w.recharges}`;
    w.funds.awaitPayment({ name: grant, category: 'paid', priority: 50, expiresAt: null }, ++this.grantSeq, amount);
    w.rechargedByMonth.set(month, (w.rechargedByMonth.get(month) ?? 0n) + amount);
    w.recharge = { grant, amount, month, card: w.card };
  }

  /** The recharge in flight resolves as its card fares: paid (failures reset), or declined (canceled; the third decline in a row turns it off). */
  private settleRecharge(w: Wallet, at: number): void {
    const recharge = w.recharge;
    if (recharge === null) return;
    w.recharge = null;
    const rule = w.autoRecharge!;
    if (this.cardDeclines.get(recharge.card) === true) {
      w.funds.cancel(recharge.grant);
      w.rechargedByMonth.set(recharge.month, w.rechargedByMonth.get(recharge.month)! - recharge.amount);
      rule.failures++;
      if (rule.failures >= 3) rule.enabled = false;
      return;
    }
    w.funds.pay(recharge.grant, at);
    rule.failures = 0;
  }

  /** A credit (a paid grant, priority 50, no expiry) or a grant, effective at once: its money pays the debt first. */
  private addGrant(
    op: Extract<Op, { kind: 'credit' | 'grant' }>,
    answer: Answer,
    atMs: number,
    spec: { category: 'paid' | 'promotional'; priority: number; expiresInMs: number | null },
  ): void {
    const w = this.walletAt(op.wallet, atMs);
    const expected =
      op.amount <= 0n
        ? refused(400, 'invalid_amount', 'a credit must be positive')
        : spec.expiresInMs !== null && spec.expiresInMs <= 0
          ? refused(400, 'invalid_expiry', 'expires_at must be in the future')
          : w.funds.balance() + op.amount > MAX_AMOUNT
            ? refused(422, 'amount_out_of_range', 'the balance would pass 10^12')
            : ok(201, 'the grant is created and effective at once');
    agree(op, answer, [expected]);
    if (expected.status !== 201) {
      this.refusedNames.add(op.grant);
      return;
    }
    const expiresAt = spec.expiresInMs === null ? null : atMs + spec.expiresInMs;
    w.funds.activate({ name: op.grant, category: spec.category, priority: spec.priority, expiresAt }, ++this.grantSeq, op.amount, atMs);
  }

  /**
   * A Checkout top-up: 201 and a grant awaiting payment (paid, priority 50, no expiry, effective
   * at creation), which the customer's payment activates (its money pays the debt first) or
   * the session's expiry cancels. The amount must be whole cents, at least 0.50.
   */
  private checkout(op: Extract<Op, { kind: 'checkout' }>, answer: Answer, atMs: number): void {
    const w = this.walletAt(op.wallet, atMs);
    const chargeable = op.amount >= STRIPE_MINIMUM && op.amount % MINOR_UNIT === 0n;
    const expected = chargeable ? ok(201, 'a grant awaiting payment and a session') : refused(400, 'invalid_amount', 'not chargeable');
    agree(op, answer, [expected]);
    if (expected.status !== 201) {
      this.refusedNames.add(op.grant);
      return;
    }
    w.funds.awaitPayment({ name: op.grant, category: 'paid', priority: 50, expiresAt: null }, ++this.grantSeq, op.amount);
    if (!op.paid) return w.funds.cancel(op.grant);
    if (w.funds.balance() + op.amount > MAX_AMOUNT) return; // not credited: payment_mismatch (never drawn)
    w.funds.pay(op.grant, atMs);
    w.card = op.card;
  }

  /** A refund at Stripe: posted once (from the grant's unheld remaining, the rest debt); one that fails is credited back once. */
  private refund(op: Extract<Op, { kind: 'refund' }>, answer: Answer, atMs: number): void {
    const w = this.walletAt(op.wallet, atMs);
    agree(op, answer, [ok(200, "Stripe's events are received")]);
    w.funds.takeBack(op.grant, op.amount, atMs);
    if (!op.fails) return;
    // the driver lets the refund's posting (and any recharge it decided) settle before the refund fails
    this.settleRecharge(w, atMs);
    w.funds.creditBack(op.grant, op.amount, atMs);
  }

  /** A dispute freezes its grant while open; lost, the disputed amount leaves once, like a refund. */
  private dispute(op: Extract<Op, { kind: 'dispute_open' | 'dispute_close' }>, answer: Answer, atMs: number): void {
    const w = this.walletAt(op.wallet, atMs);
    agree(op, answer, [ok(200, "Stripe's events are received")]);
    const grant = w.funds.grant(op.grant);
    if (op.kind === 'dispute_open') {
      grant.disputed = true;
      this.disputes.set(op.grant, op.amount);
      return;
    }
    grant.disputed = false;
    if (op.outcome === 'lost') w.funds.takeBack(op.grant, this.disputes.get(op.grant)!, atMs);
    this.disputes.delete(op.grant);
  }

  private voidGrant(op: Extract<Op, { kind: 'void_grant' }>, answer: Answer, atMs: number): void {
    const w = this.walletAt(op.wallet, atMs);
    if (this.refusedNames.has(op.grant)) return void agree(op, answer, [NOT_FOUND(op.grant)]);
    const voided = w.funds.grant(op.grant).voided;
    agree(op, answer, [voided ? refused(409, 'grant_voided', 'voided already') : ok(200, 'the unheld remaining leaves')]);
    if (!voided) w.funds.void(op.grant, atMs);
  }

  private spendLimit(op: Extract<Op, { kind: 'spend_limit' }>, answer: Answer, atMs: number): void {
    const w = this.walletAt(op.wallet, atMs);
    agree(op, answer, [w.dayLimit === null ? ok(201, 'a new day limit') : ok(200, 'the day limit is replaced')]);
    w.dayLimit = op.amount;
  }

  private submit(op: Extract<Op, { kind: 'submit' }>, answer: Answer, atMs: number): void {
    const w = this.walletAt(op.wallet, atMs);
    const invalid = invalidLimits(op.limits, op.autoExtend);
    const amount = price(op.limits);
    const refusal = invalid === null ? refusalOf(w, amount, atMs) : null;
    const expected =
      invalid !== null
        ? refused(422, 'invalid_limits', invalid)
        : refusal?.refusal === 'insufficient_funds'
          ? refused(402, 'insufficient_funds', refusal.why)
          : refusal?.refusal === 'spend_limit'
            ? refused(402, 'spend_limit_reached', refusal.why)
            : ok(201, `a hold of ${formatMicros(amount)}`);
    agree(op, answer, [expected]);
    if (expected.status !== 201) {
      this.refusedNames.add(op.job);
      return;
    }
    if (this.jobsByName.has(op.job)) throw new Error(`model bug: the job name ${op.job} is used twice`);
    this.jobsByName.set(op.job, reserve(w, op.job, op.wallet, op.limits, op.autoExtend, atMs));
  }

  /** An event op: the first genuine delivery's answer; duplicates, re-emissions, forged and conflicting copies change nothing more. */
  private event(op: Extract<Op, { kind: 'event' }>, answer: Answer, atMs: number): void {
    const found = this.jobAt(op, answer, atMs);
    if (found === null) return;
    const invalid = invalidEvent(op);
    agree(op, answer, [invalid === null ? ok(200, 'the event is accepted') : refused(400, 'invalid_payload', invalid)]);
    if (invalid === null) settle(found.job, found.wallet, op, atMs);
  }

  private extend(op: Extract<Op, { kind: 'extend' }>, answer: Answer, atMs: number): void {
    const found = this.jobAt(op, answer, atMs);
    if (found === null) return;
    const expected = this.extensionOutcome(found.job, found.wallet, op.add, atMs);
    agree(op, answer, [expected]);
    if (expected.status === 201) extendByRequest(found.job, found.wallet, op.add, atMs);
  }

  /** The tenant's extension as the contract answers it now: 422, 409 on a terminal job, 402 when the wallet cannot fund it, else 201. */
  private extensionOutcome(job: Job, w: Wallet, add: Usage, atMs: number): Outcome {
    const invalid = invalidAdd(add);
    if (invalid !== null) return refused(422, 'invalid_limits', invalid);
    if (isTerminal(job.state)) return TERMINAL;
    const amount = priceOfAdd(job, add);
    const refusal = amount > 0n ? refusalOf(w, amount, atMs) : null;
    if (refusal?.refusal === 'insufficient_funds') return refused(402, 'insufficient_funds', refusal.why);
    if (refusal?.refusal === 'spend_limit') return refused(402, 'spend_limit_reached', refusal.why);
    return ok(201, `an extension of ${formatMicros(amount)}`);
  }

  /** A dead-lettered completion: retried, it settles as it would have; discarded, the job stays as it was. */
  private deadLetter(op: Extract<Op, { kind: 'dead_letter' }>, answer: Answer, atMs: number): void {
    const found = this.jobAt(op, answer, atMs);
    if (found === null) return;
    agree(op, answer, [op.then === 'retry' ? ok(202, 'queued again') : ok(200, 'set aside for good')]);
    if (op.then === 'retry') settle(found.job, found.wallet, { type: 'job.completed', usage: op.usage }, atMs);
  }

  /**
   * Whether a race of submissions has one outcome whatever order the lock chooses: every
   * hold fits (funds and the day's limit), no debt (a return and a recharge would pay it in
   * an order of their own), a card that pays, and, once a recharge lands mid-race, the
   * remaining holds cannot take `available` below the threshold again.
   */
  raceFits(op: Extract<Op, { kind: 'race_submits' }>, atMs: number): boolean {
    const w = this.walletAt(op.wallet, atMs);
    const each = price(op.limits);
    const all = each * BigInt(op.jobs.length);
    if (invalidLimits(op.limits, null) !== null || refusalOf(w, all, atMs) !== null || w.funds.debt > 0n) return false;
    const rule = w.autoRecharge;
    if (rule === null || !rule.enabled || w.card === null) return true;
    if (this.cardDeclines.get(w.card) === true) return false;
    return each * BigInt(op.jobs.length - 1) <= rule.target - rule.threshold;
  }

  private raceSubmits(op: Extract<Op, { kind: 'race_submits' }>, answer: Answer, atMs: number): void {
    const w = this.walletAt(op.wallet, atMs);
    agree(op, answer, [ok(201, 'every hold fits')]);
    for (const name of op.jobs) if (this.jobsByName.has(name)) throw new Error(`model bug: the job name ${name} is used twice`);
    const jobs = op.jobs.map((name) => reserve(w, name, op.wallet, op.limits, null, atMs));
    for (const job of jobs) {
      this.jobsByName.set(job.name, job);
      settle(job, w, { type: 'job.failed' }, atMs);
    }
  }

  /** Whether the job has ended (captured or released) in the model; false for one it does not know. */
  ended(job: string): boolean {
    const found = this.jobsByName.get(job);
    return found !== undefined && isTerminal(found.state);
  }

  private cancel(op: Extract<Op, { kind: 'cancel' }>, answer: Answer, atMs: number): void {
    const found = this.jobAt(op, answer, atMs);
    if (found === null) return;
    const terminal = isTerminal(found.job.state);
    agree(op, answer, [terminal ? TERMINAL : ok(202, 'cancel_requested (idempotent)')]);
    if (!terminal) this.requestCancel(found.job, atMs);
  }

  /**
   * An extension and the completion at once: 201 says the extension committed first (the
   * completion captures from the grown hold), 409 job_terminal that the completion did;
   * a refusal (402, 422) leaves the completion alone to capture.
   */
  private raceExtendComplete(op: Extract<Op, { kind: 'race_extend_complete' }>, answer: Answer, atMs: number): void {
    const found = this.jobAt(op, answer, atMs);
    if (found === null) return;
    const { job, wallet } = found;
    const first = this.extensionOutcome(job, wallet, op.add, atMs);
    const allowed =
      first.status === 422 || first.status === 409 ? [first] : [first, refused(409, 'job_terminal', 'the completion committed first')];
    const outcome = agree(op, answer, allowed);
    if (outcome.status === 201) extendByRequest(job, wallet, op.add, atMs);
    settle(job, wallet, { type: 'job.completed', usage: op.usage }, atMs);
  }

  /** The tenant's cancel and the completion at once: 202 (cancel first) or 409 (completion first); the completion captures either way. */
  private raceCancelComplete(op: Extract<Op, { kind: 'race_cancel_complete' }>, answer: Answer, atMs: number): void {
    const found = this.jobAt(op, answer, atMs);
    if (found === null) return;
    const { job, wallet } = found;
    const allowed = isTerminal(job.state)
      ? [TERMINAL]
      : [ok(202, 'the cancel committed first'), refused(409, 'job_terminal', 'the completion committed first')];
    const outcome = agree(op, answer, allowed);
    if (outcome.status === 202) this.requestCancel(job, atMs);
    settle(job, wallet, { type: 'job.completed', usage: op.usage }, atMs);
  }

  private requestCancel(job: Job, atMs: number): void {
    job.state = 'cancel_requested';
    job.cancelRequestedAt ??= atMs;
  }

  /** The op's wallet, with its time-driven effects applied up to the op's instant. */
  private walletAt(name: string, atMs: number): Wallet {
    const w = this.walletsByName.get(name);
    if (w === undefined) throw new Error(`the model knows no wallet ${name} (an op before its tenant op?)`);
    this.advance(w, atMs);
    return w;
  }

  /** The op's job and wallet; null (after agreeing to a 404) for a job whose submission Tally refused. */
  private jobAt(op: Op & { wallet: string; job: string }, answer: Answer, atMs: number): { job: Job; wallet: Wallet } | null {
    const wallet = this.walletAt(op.wallet, atMs);
    if (this.refusedNames.has(op.job)) {
      agree(op, answer, [NOT_FOUND(op.job)]);
      return null;
    }
    const job = this.jobsByName.get(op.job);
    if (job === undefined) throw new Error(`the model knows no job ${op.job} (an op before its submit op?)`);
    return { job, wallet };
  }

  /**
   * Time-driven effects up to `atMs`, in the order of their instants: a grant's expiry
   * posts (its unheld remaining leaves), a job's cancel grace runs out (its hold is
   * released). Each happens at its own instant, whenever the model gets to it.
   */
  private advance(w: Wallet, atMs: number): void {
    if (atMs <= w.clock) return;
    const due: { at: number; run: () => void }[] = [];
    for (const grant of w.funds.dueExpiries(atMs)) due.push({ at: grant.expiresAt ?? 0, run: () => w.funds.postExpiry(grant) });
    for (const job of this.jobsByName.values()) {
      if (job.wallet !== w.name || job.state !== 'cancel_requested' || job.cancelRequestedAt === null) continue;
      const at = job.cancelRequestedAt + this.cancelGraceMs;
      if (at <= atMs) due.push({ at, run: () => release(job, w, at) });
    }
    for (const effect of due.sort((a, b) => a.at - b.at)) effect.run();
    w.clock = atMs;
  }
}

/** The outcome Tally's answer is, among those the contract allows; ModelDisagrees when none. */
function agree(op: Op, answer: Answer, allowed: Outcome[]): Outcome {
  const match = allowed.find((o) => o.status === answer.status && (o.code === undefined || o.code === '' || o.code === answer.code));
  if (match !== undefined) return match;
  const expected = allowed.map((o) => `${o.status}${o.code ? ` ${o.code}` : ''} (${o.why})`).join(' or ');
  throw new ModelDisagrees(
    `${describe(op)}: the contract expects ${expected}; Tally answered ${answer.status}${answer.code ? ` ${answer.code}` : ''}`,
  );
}

function describe(op: Op): string {
  return JSON.stringify(op, (_key, value: unknown) => (typeof value === 'bigint' ? formatMicros(value) : value));
}
