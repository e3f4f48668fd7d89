import type { AutoExtendRule, Op, ProviderEventType, ProviderKind, StripeDelivery, Usage } from './ops.js';
import { Random } from './random.js';

/**
 * The op sequence of a seed: a pure function of (seed, steps). It keeps a light shadow of
 * what it asked for (which jobs it submitted, which it sent a terminal event) only to draw
 * plausible ops; it never predicts Tally's answers — the driver skips an op whose job was
 * refused, and the model says what every answer must be.
 */

export interface GeneratorOptions {
  steps: number;
  /** a quiescent check every this many ops (and one at the end) */
  checkEvery: number;
}

const TENANTS = { min: 3, max: 6 };

const WEIGHTS = {
  submit: 18,
  progress: 12,
  started: 3,
  completed: 12,
  failed: 3,
  canceled: 3,
  corrected: 6,
  extend: 6,
  cancel: 4,
  race_extend_complete: 2,
  race_cancel_complete: 2,
  credit: 4,
  grant: 5,
  void_grant: 2,
  spend_limit: 2,
  checkout: 3,
  refund: 2,
  dispute_open: 1,
  dispute_close: 1,
  card: 1,
  auto_recharge: 1,
  dead_letter: 1,
  race_submits: 2,
} as const;

/**
 * The wallets that recharge themselves (the first two): their grants never expire and no
 * race op touches them, so that every posting that may decide a recharge is one op's, and
 * the recharge settles before the wallet's next op.
 */
const RECHARGING = 2;

/** A paid checkout's payment, as the generator asked for it. */
interface ShadowPayment {
  grant: string;
  amount: bigint;
  /** refunded or lost in a dispute so far */
  returned: bigint;
  disputed: bigint | null;
}

interface ShadowJob {
  name: string;
  wallet: string;
  provider: ProviderKind;
  limits: Usage;
  autoExtend: AutoExtendRule | null;
  /** a terminal event was sent (later events are still drawn sometimes: late, no effect) */
  ended: boolean;
  corrections: number;
  progress: Usage;
}

export function generate(seed: number, options: GeneratorOptions): Op[] {
  const random = new Random(seed);
  const ops: Op[] = [];
  const wallets: string[] = [];
  const grants = new Map<string, string[]>();
  const jobs: ShadowJob[] = [];
  let grantCount = 0;
  const payments = new Map<string, ShadowPayment[]>();
  const cards = new Map<string, string>();
  let cardCount = 0;
  const delivery = (paid: boolean): StripeDelivery => ({
    order: random.int(1, 2 ** 30),
    copies: random.chance(0.5) ? 1 : random.int(2, 3),
    forged: random.chance(0.1),
    onlyCompleted: paid && random.chance(0.15),
  });
  const cents = (min: bigint, max: bigint): bigint => BigInt(random.int(Number(min / 10_000n), Number(max / 10_000n))) * 10_000n;
  const checkout = (wallet: string, paid: boolean): Op => {
    const grant = `g${++grantCount}`;
    const card = `pm_sim_${++cardCount}`;
    const amount = BigInt(random.int(50, 3_000)) * 10_000n;
    if (paid) {
      payments.get(wallet)!.push({ grant, amount, returned: 0n, disputed: null });
      cards.set(wallet, card);
    }
    return { kind: 'checkout', wallet, grant, amount, paid, card, delivery: delivery(paid) };
  };
  const autoRecharge = (wallet: string): Op => {
    const threshold = BigInt(random.int(1, 8)) * 1_000_000n;
    return {
      kind: 'auto_recharge',
      wallet,
      enabled: random.chance(0.9),
      threshold,
      target: random.chance(0.1) ? threshold : threshold + cents(1_000_000n, 20_000_000n),
      monthlyLimit: random.chance(0.3) ? BigInt(random.int(10, 80)) * 1_000_000n : null,
    };
  };
  const tenants = random.int(TENANTS.min, TENANTS.max);
  for (let t = 1; t <= tenants; t++) {
    const wallet = `w${t}`;
    wallets.push(wallet);
    grants.set(wallet, []);
    ops.push({ kind: 'tenant', tenant: `t${t}`, wallet });
    const grant = `g${++grantCount}`;
    grants.get(wallet)!.push(grant);
    ops.push({ kind: 'credit', wallet, grant, amount: BigInt(random.int(5, 40)) * 1_000_000n });
    payments.set(wallet, []);
    if (t <= RECHARGING) ops.push(checkout(wallet, true), autoRecharge(wallet));
  }
  const recharging = (wallet: string) => Number(wallet.slice(1)) <= RECHARGING;
  /** an extension's `add`, in a dimension the job's model prices: up to `max` gpu_seconds' worth */
  const growth = (job: ShadowJob, max: number): Usage =>
    job.provider === 'replicate'
      ? { predict_ms: random.int(1, max) * 1_000 }
      : job.provider === 'openai'
        ? { output_tokens: random.int(1, max) * 200 }
        : { gpu_seconds: random.int(1, max) };
  const usage = (limits: Usage, scale: number): Usage =>
    Object.fromEntries(Object.entries(limits).map(([d, max]) => [d, random.int(0, Math.max(1, Math.floor(max * scale)))]));
  const event = (job: ShadowJob, type: ProviderEventType, fields: { usage?: Usage; correction?: number } = {}): Op => ({
    kind: 'event',
    wallet: job.wallet,
    job: job.name,
    type,
    ...fields,
    copies: random.chance(0.4) ? random.int(2, 4) : 1,
    reemit: random.chance(0.25),
    forged: random.chance(0.08),
    conflicting: random.chance(0.05),
  });

  while (ops.length < options.steps) {
    if (ops.length % options.checkEvery === 0) ops.push({ kind: 'check' });
    const wallet = random.pick(wallets);
    const open = jobs.filter((j) => j.wallet === wallet && !j.ended);
    const any = jobs.filter((j) => j.wallet === wallet);
    const action = random.weighted(WEIGHTS);
    const job =
      open.length > 0 && (action !== 'corrected' || any.length === 0) ? random.pick(open) : any.length > 0 ? random.pick(any) : null;
    switch (action) {
      case 'submit': {
        const provider = random.weighted({ generic: 6, replicate: 2, openai: 2 } as const);
        let limits: Usage;
        let autoExtend: AutoExtendRule | null = null;
        if (provider === 'replicate') {
          limits = { predict_ms: random.int(20_000, 300_000) };
          if (random.chance(0.5))
            autoExtend = {
              step: { predict_ms: random.int(20_000, 100_000) },
              max_limits: { predict_ms: limits.predict_ms! + random.int(0, 500_000) },
            };
        } else if (provider === 'openai') {
          limits = { input_tokens: random.int(1_000, 200_000), cached_input_tokens: random.int(0, 50_000), output_tokens: random.int(1_000, 50_000) };
        } else {
          limits = random.chance(0.7)
            ? { gpu_seconds: random.int(50, 600) }
            : { gpu_seconds: random.int(50, 400), input_tokens: random.int(1_000, 200_000) };
          if (random.chance(0.5))
            autoExtend = { step: { gpu_seconds: random.int(50, 300) }, max_limits: { gpu_seconds: limits.gpu_seconds! + random.int(0, 1_500) } };
        }
        const name = `j${jobs.length + 1}`;
        jobs.push({ name, wallet, provider, limits, autoExtend, ended: false, corrections: 0, progress: {} });
        ops.push({ kind: 'submit', wallet, job: name, limits, autoExtend, ...(provider === 'generic' ? {} : { provider }) });
        break;
      }
      case 'progress':
        // only the generic provider reports usage while a job runs (Replicate's `processing` is a start; OpenAI sends none)
        if (job && !job.ended && job.provider === 'generic') {
          // cumulative: mostly growing, sometimes an older (smaller) report arriving late
          const next = usage(job.limits, random.chance(0.6) ? 1.6 : 0.8);
          ops.push(event(job, 'job.progress', { usage: next }));
        } else if (job && !job.ended && job.provider === 'replicate') ops.push(event(job, 'job.started'));
        break;
      case 'started':
        if (job && job.provider !== 'openai') ops.push(event(job, 'job.started'));
        break;
      case 'completed':
      case 'canceled':
      case 'failed':
        if (job) {
          const withUsage = action === 'completed' || random.chance(0.6);
          ops.push(event(job, `job.${action}`, withUsage ? { usage: usage(job.limits, 1.8) } : {}));
          job.ended = true;
        }
        break;
      case 'corrected':
        // corrections are the generic provider's (the named ones' adapters have none)
        if (job && job.provider === 'generic') {
          // numbers mostly increasing, sometimes repeated or older: stale
          const correction = random.chance(0.8) ? ++job.corrections : Math.max(1, job.corrections);
          ops.push(event(job, 'job.usage_corrected', { usage: usage(job.limits, 1.5), correction }));
          job.ended = true;
        }
        break;
      case 'extend':
        if (job) ops.push({ kind: 'extend', wallet, job: job.name, add: growth(job, 400), copies: random.int(1, 3) });
        break;
      case 'cancel':
        if (job) ops.push({ kind: 'cancel', wallet, job: job.name });
        break;
      case 'race_extend_complete':
        if (job && !job.ended && !recharging(wallet)) {
          ops.push({
            kind: 'race_extend_complete',
            wallet,
            job: job.name,
            add: growth(job, 300),
            usage: usage(job.limits, 1.4),
          });
          job.ended = true;
        }
        break;
      case 'race_cancel_complete':
        if (job && !job.ended && !recharging(wallet)) {
          ops.push({ kind: 'race_cancel_complete', wallet, job: job.name, usage: usage(job.limits, 1) });
          job.ended = true;
        }
        break;
      case 'credit': {
        const grant = `g${++grantCount}`;
        grants.get(wallet)!.push(grant);
        ops.push({ kind: 'credit', wallet, grant, amount: BigInt(random.int(1, 20)) * 1_000_000n });
        break;
      }
      case 'grant': {
        const grant = `g${++grantCount}`;
        grants.get(wallet)!.push(grant);
        ops.push({
          kind: 'grant',
          wallet,
          grant,
          amount: BigInt(random.int(1, 15)) * 1_000_000n + BigInt(random.int(0, 999_999)),
          category: random.chance(0.6) ? 'promotional' : 'paid',
          priority: random.pick([10, 30, 50, 70, 90]),
          // some expire within seconds, while jobs hold them
          expiresInMs: recharging(wallet)
            ? null
            : random.chance(0.35)
              ? random.int(4_000, 25_000)
              : random.chance(0.3)
                ? 86_400_000
                : null,
        });
        break;
      }
      case 'void_grant': {
        const own = grants.get(wallet)!;
        if (own.length > 1) ops.push({ kind: 'void_grant', wallet, grant: random.pick(own.slice(1)) });
        break;
      }
      case 'spend_limit':
        ops.push({ kind: 'spend_limit', tenant: `t${wallet.slice(1)}`, wallet, amount: BigInt(random.int(2, 25)) * 1_000_000n });
        break;
      case 'checkout':
        ops.push(checkout(wallet, random.chance(0.85)));
        break;
      case 'refund': {
        const refundable = payments.get(wallet)!.filter((p) => p.disputed === null && p.amount - p.returned >= 10_000n);
        if (refundable.length === 0) break;
        const payment = random.pick(refundable);
        const amount = cents(10_000n, payment.amount - payment.returned);
        const fails = random.chance(0.2);
        if (!fails) payment.returned += amount;
        ops.push({ kind: 'refund', wallet, grant: payment.grant, amount, fails, delivery: delivery(false) });
        break;
      }
      case 'dispute_open': {
        const open = payments.get(wallet)!.filter((p) => p.disputed === null && p.amount - p.returned >= 10_000n);
        if (open.length === 0) break;
        const payment = random.pick(open);
        payment.disputed = cents(10_000n, payment.amount - payment.returned);
        ops.push({ kind: 'dispute_open', wallet, grant: payment.grant, amount: payment.disputed, delivery: delivery(false) });
        break;
      }
      case 'dispute_close': {
        const disputed = payments.get(wallet)!.filter((p) => p.disputed !== null);
        if (disputed.length === 0) break;
        const payment = random.pick(disputed);
        const outcome = random.chance(0.5) ? 'lost' : 'won';
        if (outcome === 'lost') payment.returned += payment.disputed!;
        payment.disputed = null;
        ops.push({ kind: 'dispute_close', wallet, grant: payment.grant, outcome, delivery: delivery(false) });
        break;
      }
      case 'dead_letter':
        if (job && !job.ended) {
          const then = random.chance(0.6) ? 'retry' : 'discard';
          ops.push({ kind: 'dead_letter', wallet, job: job.name, usage: usage(job.limits, 1.2), then });
          if (then === 'retry') job.ended = true;
        }
        break;
      case 'race_submits':
        if (recharging(wallet)) {
          // mostly with a threshold far above what the wallet holds: the first hold decides the recharge, the others must see it in flight
          if (random.chance(0.7)) {
            const threshold = BigInt(random.int(300, 900)) * 1_000_000n;
            const target = threshold + BigInt(random.int(5, 20)) * 1_000_000n;
            ops.push({ kind: 'auto_recharge', wallet, enabled: true, threshold, target, monthlyLimit: null });
          }
          const names = Array.from({ length: random.int(3, 4) }, () => {
            const name = `j${jobs.length + 1}`;
            jobs.push({ name, wallet, provider: 'generic', limits: {}, autoExtend: null, ended: true, corrections: 0, progress: {} });
            return name;
          });
          ops.push({ kind: 'race_submits', wallet, jobs: names, limits: { gpu_seconds: random.int(50, 300) } });
        }
        break;
      case 'card':
        if (recharging(wallet) && cards.has(wallet)) ops.push({ kind: 'card', wallet, card: cards.get(wallet)!, declines: random.chance(0.4) });
        break;
      case 'auto_recharge':
        if (recharging(wallet)) ops.push(autoRecharge(wallet));
        break;
    }
  }
  ops.push({ kind: 'check' });
  return ops;
}
