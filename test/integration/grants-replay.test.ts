import fc from 'fast-check';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/transaction.js';
import { replay, walletTotals, type Party, type Posting, type PostingFlags, type PostingType } from '../../src/funds/posting/index.js';
import { lockWalletFunds } from '../../src/funds/wallet-funds.js';
import { InvalidLimits } from '../../src/jobs/submit.js';
import type { JobRow } from '../../src/jobs/rows.js';
import type { AccountRow } from '../../src/funds/accounts.js';
import { GrantAlreadyVoided, InsufficientFunds, InvalidExpiry } from '../../src/funds/errors.js';
import { activateGrant, createGrant, expireGrant, voidGrant } from '../../src/funds/grant-writes.js';
import { OutcomeUnknown } from '../../src/ledger/errors.js';
import { settle } from '../../src/ledger/settle.js';
import { settleBatch } from '../../src/ledger/settle-batch.js';
import type { LifecycleEvent } from '../../src/lifecycle/index.js';
import { freshDatabase } from '../support/database.js';
import { lifecycleEventArb } from '../support/lifecycle-arbitraries.js';
import {
  UNIT_PRICES,
  createTenant,
  creditWallet,
  ensureProvider,
  insertClaimedEvent,
  insertWallet,
  priceOf,
  publishPriceVersion,
  submitJob,
  uniqueName,
  type ProviderFixture,
} from '../support/fixtures.js';
import { ledgerViolations } from '../support/invariants.js';

/**
 * A seeded random mix of everything that moves a grant — credits, grants (promotional or
 * paid, priorities 0–100, some expiring a moment later, some already lapsed, some taking
 * effect later), reservations, every lifecycle event (captures, releases, corrections up
 * and down, cancels, hold expiries), expiry sweeps, voids and activations — in steps whose
 * operations run at once on several connections. After every step: the ledger
 * invariants (each grant's remaining and held are its entries, Σ shares = each hold, the
 * wallet = Σ its grants − debt), each wallet's entries replayed by the posting module's
 * replay() give every grant's remaining and held and the wallet's debt, a voided or
 * swept grant keeps nothing unheld, and nothing lapsed, voided or not yet effective
 * funded a hold or a charge.
 *
 * GRANTS_REPLAY_SEED picks another seed, GRANTS_REPLAY_RUNS another number of runs. A
 * seed fixes the operations, not the clock: grants expire by the database's time, so a
 * rerun of a seed can interleave with expiries differently.
 */
const SEED = Number(process.env.GRANTS_REPLAY_SEED ?? 250_019);
const RUNS = Number(process.env.GRANTS_REPLAY_RUNS ?? 20);

const db = await freshDatabase({ max: 12 });
afterEach(async () => expect(await violations(), 'ledger invariants violated').toEqual({}));

async function violations() {
  return ledgerViolations(db.pool);
}

let model: string;
let providers: ProviderFixture[];
beforeAll(async () => {
  model = uniqueName('model');
  await publishPriceVersion(db.pool, model, 'USD', { ...UNIT_PRICES });
  providers = [await ensureProvider(db.pool), await ensureProvider(db.pool, { policies: { failed_with_usage: 'capture' } })];
});

type Usage = Record<string, number>;
/** When a grant takes effect and lapses. */
type Timing =
  | { kind: 'lasting' }
  /** expires this many ms after creation */
  | { kind: 'expiring'; ms: number }
  /** expires_at moved into the past by SQL right after creation (an expiry the sweep has not posted) */
  | { kind: 'lapsed' }
  /** takes effect this many ms later; then perhaps expires `lasts` ms after that */
  | { kind: 'scheduled'; ms: number; lasts: number | null };

type Op =
  | { kind: 'credit'; wallet: number; key: number }
  | { kind: 'grant'; wallet: number; category: 'paid' | 'promotional'; priority: number; amount: number; timing: Timing }
  | { kind: 'submit'; wallet: number; provider: number; limits: Usage }
  /** a reservation of all the wallet can fund: corrections upward then make debt */
  | { kind: 'drain'; wallet: number }
  | { kind: 'event'; job: number; event: LifecycleEvent }
  /** events of several jobs settled in one transaction, as the worker batches them (each on its own when the batch fails) */
  | { kind: 'batch'; events: { job: number; event: LifecycleEvent }[] }
  /** the wallet of a job drained, then the job's usage corrected up to its whole reservation: a charge no grant may cover (debt) */
  | { kind: 'overdraw'; job: number }
  | { kind: 'expire'; grant: number }
  | { kind: 'void'; grant: number }
  | { kind: 'activate'; grant: number }
  /** lets the clock run on, so grants expire and take effect mid-run */
  | { kind: 'wait'; ms: number };

const usageArb: fc.Arbitrary<Usage> = fc.oneof(
  fc.record({ input_tokens: fc.nat(200), output_tokens: fc.nat(50) }, { requiredKeys: ['input_tokens'] }),
  fc.record(
    { input_tokens: fc.integer({ min: 0, max: 3000 }), output_tokens: fc.integer({ min: 0, max: 1500 }) },
    { requiredKeys: ['input_tokens'] },
  ),
);
const limitsArb = fc.record({ input_tokens: fc.integer({ min: 0, max: 2000 }), output_tokens: fc.integer({ min: 0, max: 1000 }) });

const eventArb = lifecycleEventArb(usageArb, { completed: 3, corrected: 5, maxCorrection: 5 });

const timingArb: fc.Arbitrary<Timing> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Timing>({ kind: 'lasting' }) },
  { weight: 3, arbitrary: fc.integer({ min: 20, max: 250 }).map((ms): Timing => ({ kind: 'expiring', ms })) },
  { weight: 2, arbitrary: fc.constant<Timing>({ kind: 'lapsed' }) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.integer({ min: 20, max: 300 }), fc.option(fc.integer({ min: 1, max: 300 }), { nil: null }))
      .map(([ms, lasts]): Timing => ({ kind: 'scheduled', ms, lasts })),
  },
);

const grantArb: fc.Arbitrary<Op> = fc.record({
  kind: fc.constant('grant' as const),
  wallet: fc.nat(1),
  category: fc.constantFrom('paid' as const, 'promotional' as const),
  priority: fc.oneof(fc.integer({ min: 0, max: 100 }), fc.constantFrom(0, 50, 100)),
  amount: fc.integer({ min: 1, max: 12_000 }),
  timing: timingArb,
});
const submitArb: fc.Arbitrary<Op> = fc.record({
  kind: fc.constant('submit' as const),
  wallet: fc.nat(1),
  provider: fc.nat(1),
  limits: limitsArb,
});

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('credit' as const), wallet: fc.nat(1), key: fc.nat(3) }) },
  { weight: 3, arbitrary: grantArb },
  { weight: 3, arbitrary: submitArb },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('drain' as const), wallet: fc.nat(1) }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('event' as const), job: fc.nat(11), event: eventArb }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      events: fc.array(fc.record({ job: fc.nat(11), event: eventArb }), { minLength: 2, maxLength: 4 }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('overdraw' as const), job: fc.nat(11) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('expire' as const), grant: fc.nat(15) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('void' as const), grant: fc.nat(15) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('activate' as const), grant: fc.nat(15) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 150 }) }) },
);

/** A first step of grants and one of submissions, so that later events and grant operations have something to act on. */
const scenarioArb = fc
  .tuple(
    fc.array(grantArb, { minLength: 1, maxLength: 4 }),
    fc.array(submitArb, { minLength: 1, maxLength: 4 }),
    fc.array(fc.array(opArb, { minLength: 1, maxLength: 4 }), { minLength: 2, maxLength: 9 }),
  )
  .map(([grants, submits, rest]) => [grants, submits, ...rest]);

interface Run {
  id: string;
  wallets: AccountRow[];
  jobs: JobRow[];
  /** every grant of the run (credits included), and those with an expiry, and those scheduled: what expire and activate pick from first */
  grants: string[];
  expiring: string[];
  scheduled: string[];
  ops: number;
}

/** The grant an operation names: among `preferred` when there are any, else among all. */
function pick(run: Run, preferred: string[], i: number): string | undefined {
  const from = preferred.length > 0 ? preferred : run.grants;
  return from[i % from.length];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function execute(run: Run, op: Op): Promise<void> {
  const n = ++run.ops;
  switch (op.kind) {
    case 'credit': {
      // the same key always carries the same amount: a repeat is a retry, applied once
      const credited = await creditWallet(
        db.pool,
        run.wallets[op.wallet]!,
        BigInt(op.key + 1) * 2_500n,
        `${run.id}:${op.wallet}:${op.key}`,
      );
      if (!credited.replayed) run.grants.push(credited.entry.grantId!);
      return;
    }
    case 'grant': {
      const wallet = run.wallets[op.wallet]!;
      const now = Date.now();
      const { timing } = op;
      const effectiveAt = timing.kind === 'scheduled' ? new Date(now + timing.ms).toISOString() : null;
      const expiresAt =
        timing.kind === 'expiring'
          ? new Date(now + timing.ms).toISOString()
          : timing.kind === 'lapsed'
            ? new Date(now + 3_600_000).toISOString()
            : timing.kind === 'scheduled' && timing.lasts !== null
              ? new Date(now + timing.ms + timing.lasts).toISOString()
              : null;
      let id: string;
      try {
        const created = await withTransaction(db.pool, (tx) =>
          createGrant(tx, {
            wallet,
            amount: BigInt(op.amount),
            category: op.category,
            priority: op.priority,
            effectiveAt,
            expiresAt,
            grantKey: `${wallet.tenant_id}:grant:${run.id}:${n}`,
          }),
        );
        id = created.grant.id;
      } catch (error) {
        // an expiry a few ms ahead may be past by the time the database reads its clock
        if (error instanceof InvalidExpiry && timing.kind !== 'lasting') return;
        throw error;
      }
      run.grants.push(id);
      if (expiresAt !== null) run.expiring.push(id);
      if (timing.kind === 'scheduled') run.scheduled.push(id);
      if (timing.kind === 'lapsed') {
        // An expiry already past, its sweep not run: under the wallet's lock, as any writer of its grants.
        await withTransaction(db.pool, async (tx) => {
          await tx.query('select 1 from accounts where id = $1 for no key update', [wallet.id]);
          await tx.query(
            `update grants set expires_at = greatest(clock_timestamp() - interval '1 millisecond', effective_at + interval '1 microsecond') where id = $1`,
            [id],
          );
        });
      }
      return;
    }
    case 'submit': {
      const wallet = run.wallets[op.wallet]!;
      try {
        run.jobs.push(
          await submitJob(db.pool, { tenantId: wallet.tenant_id, wallet, provider: providers[op.provider]!, model, limits: op.limits }),
        );
      } catch (error) {
        if (error instanceof InvalidLimits && priceOf(op.limits) === 0n) return;
        if (!(error instanceof InsufficientFunds)) throw error;
      }
      return;
    }
    case 'drain': {
      const wallet = run.wallets[op.wallet]!;
      const available = await withTransaction(db.pool, async (tx) => {
        const locked = (await lockWalletFunds(tx, wallet.id))!;
        return walletTotals(locked.funds, locked.now).available;
      });
      if (available < 2n) return;
      await execute(run, { kind: 'submit', wallet: op.wallet, provider: 0, limits: { input_tokens: Number(available / 2n) } });
      run.ops--;
      return;
    }
    case 'event': {
      if (run.jobs.length === 0) return;
      await settle(db.pool, { jobId: run.jobs[op.job % run.jobs.length]!.id, event: op.event });
      return;
    }
    case 'batch': {
      if (run.jobs.length === 0) return;
      const byJob = new Map(op.events.map(({ job, event }) => [run.jobs[job % run.jobs.length]!, event]));
      const requests = await Promise.all(
        [...byJob].map(async ([job, event]) => ({
          jobId: job.id,
          event,
          claim: await insertClaimedEvent(db.pool, job, { type: event.type }),
        })),
      );
      try {
        await settleBatch(db.pool, requests);
      } catch (error) {
        if (error instanceof OutcomeUnknown) throw error;
        for (const request of requests) await settle(db.pool, request);
      }
      return;
    }
    case 'overdraw': {
      // a captured job that could still be charged more
      const { rows } = await db.pool.query<{ id: string; wallet_id: string; limits: Usage; highest_correction: number }>(
        `select id, wallet_id, limits, highest_correction from jobs
         where id = any($1::uuid[]) and state = 'captured' and captured + adjusted < reserved order by id`,
        [run.jobs.map((j) => j.id)],
      );
      const job = rows[op.job % Math.max(rows.length, 1)];
      if (!job) return;
      await execute(run, { kind: 'drain', wallet: run.wallets.findIndex((w) => w.id === job.wallet_id) });
      const event: LifecycleEvent = { type: 'job.usage_corrected', correction: job.highest_correction + 1, usage: job.limits };
      await settle(db.pool, { jobId: job.id, event });
      return;
    }
    case 'expire': {
      const grant = pick(run, run.expiring, op.grant);
      if (grant) await withTransaction(db.pool, (tx) => expireGrant(tx, grant));
      return;
    }
    case 'void': {
      const grant = pick(run, [], op.grant);
      if (!grant) return;
      try {
        await withTransaction(db.pool, (tx) => voidGrant(tx, grant, 'replay: voided'));
      } catch (error) {
        if (!(error instanceof GrantAlreadyVoided)) throw error;
      }
      return;
    }
    case 'activate': {
      const grant = pick(run, run.scheduled, op.grant);
      if (grant) await withTransaction(db.pool, (tx) => activateGrant(tx, grant));
      return;
    }
    case 'wait':
      await sleep(op.ms);
      return;
  }
}

// ---------------------------------------------------------------------------------------
// Checks of one run's wallets after a step.
// ---------------------------------------------------------------------------------------

interface EntryRow {
  entry_type: PostingType;
  flags: PostingFlags;
  amount: bigint;
  grant_id: string | null;
  debit_account_id: string;
  credit_account_id: string;
  debit_kind: string;
  credit_kind: string;
}

/** A wallet's entries as the posting module's postings: a grant, or the debt when the entry names none, on the wallet's side. */
function postingOf(e: EntryRow, walletId: string): Posting {
  const own: Party = e.grant_id === null ? 'debt' : { grant: e.grant_id };
  // a grant paying the wallet's debt: both sides are the wallet
  if (e.entry_type === 'debt_repayment') return { type: e.entry_type, flags: e.flags, from: own, to: 'debt', amount: e.amount };
  const side = (account: string, kind: string): Party => (account === walletId ? own : (kind as Party));
  return {
    type: e.entry_type,
    flags: e.flags,
    from: side(e.debit_account_id, e.debit_kind),
    to: side(e.credit_account_id, e.credit_kind),
    amount: e.amount,
  };
}

/** Each wallet's entries replayed from nothing give each of its grants' remaining and held, and its debt. */
async function replayedMismatches(walletIds: string[]) {
  const mismatches: unknown[] = [];
  for (const walletId of walletIds) {
    const entries = await db.pool.query<EntryRow>(
      `select e.entry_type, e.flags, e.amount, e.grant_id, e.debit_account_id, e.credit_account_id, d.kind as debit_kind, c.kind as credit_kind
       from ledger_entries e join accounts d on d.id = e.debit_account_id join accounts c on c.id = e.credit_account_id
       where e.wallet_id = $1 order by e.wallet_seq`,
      [walletId],
    );
    const replayed = replay(entries.rows.map((e) => postingOf(e, walletId)));
    const stored = await db.pool.query<{ id: string; remaining: bigint; held: bigint; opening: bigint }>(
      'select id, remaining, held, opening from grants where wallet_id = $1',
      [walletId],
    );
    const debt = (await db.pool.query<{ debt: bigint }>('select debt from accounts where id = $1', [walletId])).rows[0]!.debt;
    const ids = new Set(stored.rows.map((g) => g.id));
    for (const g of stored.rows) {
      const r = replayed.grants.get(g.id) ?? { remaining: 0n, held: 0n };
      if (r.remaining + g.opening !== g.remaining || r.held !== g.held)
        mismatches.push({
          wallet: walletId,
          grant: g.id,
          stored: [g.remaining, g.held].map(String),
          replayed: [r.remaining, r.held].map(String),
        });
    }
    for (const id of replayed.grants.keys())
      if (!ids.has(id)) mismatches.push({ wallet: walletId, grant: id, stored: 'no such grant of the wallet' });
    if (replayed.debt !== debt) mismatches.push({ wallet: walletId, debt: { stored: String(debt), replayed: String(replayed.debt) } });
  }
  return mismatches;
}

/**
 * Grants that must not fund: a voided grant or one whose expiry has posted keeps nothing
 * unheld; and no entry of the step (after `since`, the database's clock before it began)
 * reserved from or charged an adjustment to a grant that had expired or been voided before
 * the step began, or that was not yet effective at the entry's instant.
 */
async function fundingMismatches(walletIds: string[], since: string) {
  const kept = await db.pool.query(
    `select id, remaining::text, held::text, voided_at is not null as voided, expiry_posted_at is not null as swept from grants
     where wallet_id = any($1::uuid[]) and (voided_at is not null or expiry_posted_at is not null) and remaining <> held`,
    [walletIds],
  );
  const funded = await db.pool.query(
    `select e.settlement_key, e.entry_type, e.amount::text, g.id as grant_id, e.created_at, g.expires_at, g.voided_at, g.effective_at
     from ledger_entries e join grants g on g.id = e.grant_id
     where e.wallet_id = any($1::uuid[]) and e.created_at > $2::timestamptz and e.debit_account_id = e.wallet_id
       and ((e.entry_type = 'reserve' and e.flags = 'pending') or (e.entry_type = 'adjustment' and e.flags = 'posted'))
       and (g.expires_at <= $2::timestamptz or g.voided_at <= $2::timestamptz or g.effective_at > e.created_at)`,
    [walletIds, since],
  );
  // Money that enters pays the debt first, and a charge draws every fundable grant before it makes debt:
  // while a wallet owes, none of its grants can fund anything.
  const owing = await db.pool.query(
    `select a.id as wallet_id, a.debt::text, g.id as grant_id, (g.remaining - g.held)::text as unheld from accounts a join grants g on g.wallet_id = a.id
     where a.id = any($1::uuid[]) and a.debt > 0 and g.remaining > g.held and g.activated_at is not null and g.voided_at is null
       and not g.disputed and g.expiry_posted_at is null and g.effective_at <= clock_timestamp()
       and (g.expires_at is null or g.expires_at > clock_timestamp())`,
    [walletIds],
  );
  return { kept_unheld: kept.rows, funded_when_it_could_not: funded.rows, owing_while_funded: owing.rows };
}

async function clock(): Promise<string> {
  return (
    await db.pool.query<{ at: string }>(`select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at`)
  ).rows[0]!.at;
}

describe('grants under a seeded random mix of concurrent operations', () => {
  it(
    'keeps every grant equal to its entries, shares equal to holds, the wallet equal to its grants, after every step',
    { timeout: 120_000 },
    async () => {
      console.log(`grants replay: seed ${SEED}, ${RUNS} runs (GRANTS_REPLAY_SEED and GRANTS_REPLAY_RUNS choose others)`);
      const started = performance.now();
      let [runs, steps, ops] = [0, 0, 0];
      const timing = { ops: 0, checks: 0 };
      await fc.assert(
        fc.asyncProperty(scenarioArb, fc.integer({ min: 0, max: 20_000 }), async (scenario, initialFunds) => {
          runs++;
          const tenants = [await createTenant(db.pool), await createTenant(db.pool)];
          const wallets = [await insertWallet(db.pool, tenants[0]!), await insertWallet(db.pool, tenants[1]!)];
          const run: Run = { id: uniqueName('run'), wallets, jobs: [], grants: [], expiring: [], scheduled: [], ops: 0 };
          const ids = wallets.map((w) => w.id);
          if (initialFunds > 0)
            for (const wallet of wallets) run.grants.push((await creditWallet(db.pool, wallet, BigInt(initialFunds))).entry.grantId!);
          // Last, the duties' sweeps over what is due by then: every scheduled grant activated, every expiring one expired, all at once.
          const sweep = (): Op[] => [
            ...run.scheduled.map((_, i): Op => ({ kind: 'activate', grant: i })),
            ...run.expiring.map((_, i): Op => ({ kind: 'expire', grant: i })),
          ];
          for (const [i, step] of [...scenario, sweep].entries()) {
            const since = await clock();
            const t0 = performance.now();
            const ops = typeof step === 'function' ? step() : step;
            await Promise.all(ops.map((op) => execute(run, op)));
            const t1 = performance.now();
            steps++;
            const where = `after step ${i + 1} of ${scenario.length + 1} (${ops.map((op) => op.kind).join(', ') || 'nothing due'})`;
            // on separate connections at once: the checks only read
            const [ledger, replayed, funding] = await Promise.all([violations(), replayedMismatches(ids), fundingMismatches(ids, since)]);
            expect(ledger, `ledger invariants ${where}`).toEqual({});
            expect(replayed, `replay ${where}`).toEqual([]);
            expect(funding, `funding ${where}`).toEqual({ kept_unheld: [], funded_when_it_could_not: [], owing_while_funded: [] });
            timing.ops += t1 - t0;
            timing.checks += performance.now() - t1;
          }
          ops += run.ops;
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
      expect(runs).toBe(RUNS);

      const kinds = await db.pool.query<{ entry_type: string }>('select distinct entry_type from ledger_entries order by entry_type');
      const reached = kinds.rows.map((r) => r.entry_type);
      const phases = await db.pool.query<{ charge_type: string }>('select distinct charge_type from settlements order by charge_type');
      const grantStates = await db.pool.query<{
        swept: number;
        voided: number;
        scheduled_then_active: number;
        debt_paid: number;
        debt_drawn: number;
      }>(
        `select count(*) filter (where expiry_posted_at is not null)::int as swept, count(*) filter (where voided_at is not null)::int as voided,
              count(*) filter (where activated_at > created_at and source = 'grant')::int as scheduled_then_active,
              (select count(*) from ledger_entries where entry_type = 'debt_repayment')::int as debt_paid,
              (select count(*) from adjustment_draws where grant_id is null)::int as debt_drawn
       from grants`,
      );
      console.log(
        `grants replay: seed ${SEED}: ${runs} runs, ${steps} steps, ${ops} operations in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
          `(operations ${(timing.ops / 1000).toFixed(1)} s, checks ${(timing.checks / 1000).toFixed(1)} s); ` +
          `entry types ${reached.join(' ')}; ${JSON.stringify(grantStates.rows[0])}; `,
      );
      // The mix reached every kind of movement (with the default number of runs or more).
      if (RUNS < 20) return;
      expect(phases.rows.map((r) => r.charge_type)).toEqual(['adjustment', 'capture', 'release']);
      expect(reached).toEqual(
        expect.arrayContaining([
          'reserve',
          'capture',
          'release_remainder',
          'release',
          'adjustment',
          'credit',
          'grant',
          'grant_expiry',
          'grant_void',
          'debt_repayment',
        ]),
      );
      expect(grantStates.rows[0]).toEqual({
        swept: expect.any(Number),
        voided: expect.any(Number),
        scheduled_then_active: expect.any(Number),
        debt_paid: expect.any(Number),
        debt_drawn: expect.any(Number),
      });
      for (const n of Object.values(grantStates.rows[0]!)) expect(n).toBeGreaterThan(0);
    },
  );
});

/**
 * Found by the property: a grant past its expiry funds nothing, so a charge made then is
 * debt while the lapsed grant's unheld remaining still counts in the balance; its expiry
 * or void then takes the balance below zero, which raises wallet_overdrawn.
 */
describe('a lapse that takes the balance below zero', () => {
  for (const lapse of ['expiry', 'void'] as const) {
    it(`raises wallet_overdrawn (${lapse})`, async () => {
      const wallet = await insertWallet(db.pool, await createTenant(db.pool));
      const grant = await withTransaction(db.pool, (tx) =>
        createGrant(tx, {
          wallet,
          amount: 2_000n,
          category: 'promotional',
          priority: 50,
          grantKey: `${wallet.tenant_id}:grant:lapse`,
          expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
        }),
      );
      const job = await submitJob(db.pool, {
        tenantId: wallet.tenant_id,
        wallet,
        provider: providers[0]!,
        model,
        limits: { input_tokens: 500 },
      });
      await settle(db.pool, { jobId: job.id, event: { type: 'job.completed', usage: { input_tokens: 50 } } }); // 100 of 1,000; 900 back
      // the grant is past its expiry (1 ms ago, by the database's clock); no sweep has run
      await db.pool.query(`update grants set expires_at = clock_timestamp() - interval '1 millisecond' where id = $1`, [grant.grant.id]);
      // 900 more for the work: no grant may fund it, so it is debt; the lapsed 1,900 still counts in the balance
      await settle(db.pool, { jobId: job.id, event: { type: 'job.usage_corrected', correction: 1, usage: { input_tokens: 500 } } });
      const holdings = () =>
        db.pool.query('select credits_posted - debits_posted as balance, debt from accounts where id = $1', [wallet.id]);
      expect((await holdings()).rows[0]).toEqual({ balance: 1_000n, debt: 900n });
      if (lapse === 'expiry') await withTransaction(db.pool, (tx) => expireGrant(tx, grant.grant.id));
      else await withTransaction(db.pool, (tx) => voidGrant(tx, grant.grant.id, 'lapse'));
      expect((await holdings()).rows[0]).toEqual({ balance: -900n, debt: 900n });
      const alerts = await db.pool.query(`select class from alerts where tenant_id = $1`, [wallet.tenant_id]);
      expect(alerts.rows).toEqual([{ class: 'wallet_overdrawn' }]);
    });
  }
});
