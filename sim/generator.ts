import type { AutoExtendRule, Op, ProviderEventType, Usage } from './ops.js';
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
} as const;

interface ShadowJob {
  name: string;
  wallet: string;
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
  const tenants = random.int(TENANTS.min, TENANTS.max);
  for (let t = 1; t <= tenants; t++) {
    const wallet = `w${t}`;
    wallets.push(wallet);
    grants.set(wallet, []);
    ops.push({ kind: 'tenant', tenant: `t${t}`, wallet });
    const grant = `g${++grantCount}`;
    grants.get(wallet)!.push(grant);
    ops.push({ kind: 'credit', wallet, grant, amount: BigInt(random.int(5, 40)) * 1_000_000n });
  }
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
        const limits: Usage = random.chance(0.7)
          ? { gpu_seconds: random.int(50, 600) }
          : { gpu_seconds: random.int(50, 400), input_tokens: random.int(1_000, 200_000) };
        const autoExtend: AutoExtendRule | null = random.chance(0.5)
          ? { step: { gpu_seconds: random.int(50, 300) }, max_limits: { gpu_seconds: limits.gpu_seconds! + random.int(0, 1_500) } }
          : null;
        const name = `j${jobs.length + 1}`;
        jobs.push({ name, wallet, limits, autoExtend, ended: false, corrections: 0, progress: {} });
        ops.push({ kind: 'submit', wallet, job: name, limits, autoExtend });
        break;
      }
      case 'progress':
        if (job && !job.ended) {
          // cumulative: mostly growing, sometimes an older (smaller) report arriving late
          const next = usage(job.limits, random.chance(0.6) ? 1.6 : 0.8);
          ops.push(event(job, 'job.progress', { usage: next }));
        }
        break;
      case 'started':
        if (job) ops.push(event(job, 'job.started'));
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
        if (job) {
          // numbers mostly increasing, sometimes repeated or older: stale
          const correction = random.chance(0.8) ? ++job.corrections : Math.max(1, job.corrections);
          ops.push(event(job, 'job.usage_corrected', { usage: usage(job.limits, 1.5), correction }));
          job.ended = true;
        }
        break;
      case 'extend':
        if (job) ops.push({ kind: 'extend', wallet, job: job.name, add: { gpu_seconds: random.int(1, 400) }, copies: random.int(1, 3) });
        break;
      case 'cancel':
        if (job) ops.push({ kind: 'cancel', wallet, job: job.name });
        break;
      case 'race_extend_complete':
        if (job && !job.ended) {
          ops.push({
            kind: 'race_extend_complete',
            wallet,
            job: job.name,
            add: { gpu_seconds: random.int(1, 300) },
            usage: usage(job.limits, 1.4),
          });
          job.ended = true;
        }
        break;
      case 'race_cancel_complete':
        if (job && !job.ended) {
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
          expiresInMs: random.chance(0.35) ? random.int(4_000, 25_000) : random.chance(0.3) ? 86_400_000 : null,
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
    }
  }
  ops.push({ kind: 'check' });
  return ops;
}
