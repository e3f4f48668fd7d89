/**
 * The operations of the whole-service simulation (issue 36), as the generator draws them
 * from the seed and the driver performs them over Tally's HTTP API and signed webhooks.
 * Names (`tenant`, `wallet`, `grant`, `job`) are the simulation's own labels ("t3",
 * "w3", "g7", "j12"); the driver maps them to Tally's ids. Amounts are bigint micro-units
 * (1.000000 = 1_000_000n), usage is integer units. Nothing here imports src/.
 *
 * Execution discipline (what makes a reference model possible): the ops of one wallet
 * (its credits, grants, jobs, events and extensions) are performed one after another, and
 * an event op returns only once the job's accepted events are all settled; different
 * wallets run at the same time. The only same-wallet concurrency is the `race_*` ops,
 * whose outcome the contract leaves to the job's lock: the model accepts either allowed
 * outcome, as Tally answered, and checks its consequences.
 */

/** The one model every job runs: its price per 1,000,000 units of each dimension (micro-units per million units). */
export const SIM_MODEL = 'sim/gpu';
export const SIM_CURRENCY = 'USD';
/**
 * Every priced dimension of the run, in micro-units per million units: 0.002 per
 * gpu_second, 0.000003 per input token (both models that count input tokens price them
 * alike, so one table prices every job), 0.00115 per second of Replicate's predict time,
 * 1.25 and 10.00 per million cached input and output tokens.
 */
export const SIM_UNIT_PRICES: Readonly<Record<string, bigint>> = {
  gpu_seconds: 2_000_000_000n,
  input_tokens: 3_000_000n,
  predict_ms: 1_150_000_000n,
  cached_input_tokens: 1_250_000n,
  output_tokens: 10_000_000n,
};

/** Which provider a job runs at: the generic one (the contract's own webhook), or a named one's adapter. */
export type ProviderKind = 'generic' | 'replicate' | 'openai';

/** Each kind's provider, the model its jobs run and the dimensions that model prices. */
export const SIM_PROVIDERS: Readonly<Record<ProviderKind, { provider: string; model: string; dimensions: readonly string[] }>> = {
  generic: { provider: 'sim-provider', model: SIM_MODEL, dimensions: ['gpu_seconds', 'input_tokens'] },
  replicate: { provider: 'sim-replicate', model: 'sim/replicate-gpu', dimensions: ['predict_ms'] },
  openai: { provider: 'sim-openai', model: 'sim-gpt', dimensions: ['input_tokens', 'cached_input_tokens', 'output_tokens'] },
};

export type Usage = Readonly<Record<string, number>>;

export interface AutoExtendRule {
  step: Usage;
  max_limits: Usage;
}

export type ProviderEventType = 'job.started' | 'job.progress' | 'job.completed' | 'job.failed' | 'job.canceled' | 'job.usage_corrected';

export type Op =
  /** a tenant with one USD wallet (POST /v1/tenants, POST /v1/wallets) */
  | { kind: 'tenant'; tenant: string; wallet: string }
  /** POST /v1/wallets/{id}/credits: a paid grant of priority 50, no expiry, effective at once */
  | { kind: 'credit'; wallet: string; grant: string; amount: bigint }
  /** POST /v1/wallets/{id}/grants, effective at once; expiresInMs: its expires_at is that long after the op starts (null: none) */
  | {
      kind: 'grant';
      wallet: string;
      grant: string;
      amount: bigint;
      category: 'paid' | 'promotional';
      priority: number;
      expiresInMs: number | null;
    }
  /** POST /v1/grants/{id}/void */
  | { kind: 'void_grant'; wallet: string; grant: string }
  /** PUT /v1/tenants/{id}/spend-limits, period day, in USD */
  | { kind: 'spend_limit'; tenant: string; wallet: string; amount: bigint }
  /**
   * POST /v1/jobs (answers 201, or 402 insufficient_funds / spend_limit_reached), at the
   * generic provider or a named one (generic when absent): a named job's events are that
   * provider's own webhooks (a Replicate prediction; an OpenAI event whose usage Tally
   * fetches from the simulation's OpenAI API), mapped to the generic types the model knows.
   */
  | { kind: 'submit'; wallet: string; job: string; limits: Usage; autoExtend: AutoExtendRule | null; provider?: ProviderKind }
  /**
   * A provider event of the job, through the generic provider's signed webhook: `copies`
   * deliveries under one webhook-id (1: no duplicate), `reemit` once more under a new id,
   * `forged` a copy with a wrong signature (401), `conflicting` a different body under the
   * first id (409 event_key_conflict). Returns once every accepted event of the job is settled.
   */
  | {
      kind: 'event';
      wallet: string;
      job: string;
      type: ProviderEventType;
      usage?: Usage;
      correction?: number;
      copies: number;
      reemit: boolean;
      forged: boolean;
      conflicting: boolean;
    }
  /** POST /v1/jobs/{id}/extensions with one Idempotency-Key, sent `copies` times one after another (the later ones replay) */
  | { kind: 'extend'; wallet: string; job: string; add: Usage; copies: number }
  /** POST /v1/jobs/{id}/cancel */
  | { kind: 'cancel'; wallet: string; job: string }
  /** an extension and the completion at once: the job's lock orders them (201 then captured from the grown hold, or 409 job_terminal) */
  | { kind: 'race_extend_complete'; wallet: string; job: string; add: Usage; usage: Usage }
  /** the tenant's cancel and the completion at once: the completion is accepted, so it wins (captured) */
  | { kind: 'race_cancel_complete'; wallet: string; job: string; usage: Usage }
  /**
   * A Checkout top-up through the local Stripe: POST /v1/wallets/{id}/checkout-sessions
   * (a grant awaiting payment), then the customer pays it with card `card` (or lets it
   * expire); Stripe's events reach Tally as `delivery` says. Returns once they are settled.
   */
  | { kind: 'checkout'; wallet: string; grant: string; amount: bigint; paid: boolean; card: string; delivery: StripeDelivery }
  /** A refund of a paid checkout's payment, made at Stripe (`fails`: pending, then failed); amount in micro-units, whole cents */
  | { kind: 'refund'; wallet: string; grant: string; amount: bigint; fails: boolean; delivery: StripeDelivery }
  /** A dispute opened on a paid checkout's payment: its grant is frozen until the dispute closes */
  | { kind: 'dispute_open'; wallet: string; grant: string; amount: bigint; delivery: StripeDelivery }
  /** The grant's open dispute closes: `lost` takes the disputed amount, `won` only unfreezes */
  | { kind: 'dispute_close'; wallet: string; grant: string; outcome: 'won' | 'lost'; delivery: StripeDelivery }
  /** How the card of the tenant's checkouts fares in a recharge from now on (the local Stripe's card behaviour) */
  | { kind: 'card'; wallet: string; card: string; declines: boolean }
  /** PUT /v1/wallets/{id}/auto-recharge */
  | { kind: 'auto_recharge'; wallet: string; enabled: boolean; threshold: bigint; target: bigint; monthlyLimit: bigint | null }
  /**
   * A completion the database refuses for good (a trigger on the job's capture, the sim's
   * fault): dead-lettered after TALLY_MAX_ATTEMPTS; then the refusal is lifted and the
   * operator retries it (POST …/retry: it settles) or discards it (POST …/discard: the job's
   * hold no longer waits for it).
   */
  | { kind: 'dead_letter'; wallet: string; job: string; usage: Usage; then: 'retry' | 'discard' }
  /**
   * Submissions of jobs of the same limits on one recharging wallet at once, then each
   * failed (released): the wallet's lock orders them, and whichever order it chose, one
   * recharge at most is decided, by the first that leaves `available` below the threshold.
   * Performed only when the model says all fit and no second recharge could be due.
   */
  | { kind: 'race_submits'; wallet: string; jobs: string[]; limits: Usage }
  /** a quiescent point: every accepted event settled, then every wallet, grant and job compared with the model */
  | { kind: 'check' };

/**
 * How Stripe's events of one op reach Tally: each delivered `copies` times (1–3), in an
 * order shuffled by `order` (a seed), some sent once more with a forged signature (401).
 * `onlyCompleted`: of a paid checkout only `checkout.session.completed` arrives (the card is
 * then read from Stripe).
 */
export interface StripeDelivery {
  order: number;
  copies: number;
  forged: boolean;
  onlyCompleted: boolean;
}

/** What Tally answered to an op, as the driver hands it to the model. */
export interface Answer {
  /** HTTP status of the op's main call (for `event`: of the first genuine delivery; for `race_*`: of the API call) */
  status: number;
  /** the error code, when the status is an error */
  code?: string;
}
