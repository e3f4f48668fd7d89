import fc from 'fast-check';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AccountRow } from '../../src/funds/accounts.js';
import { InvalidLimits } from '../../src/jobs/submit.js';
import { InsufficientFunds } from '../../src/funds/errors.js';
import { settle } from '../../src/ledger/settle.js';
import type { JobRow } from '../../src/jobs/rows.js';
import type { LifecycleEvent } from '../../src/lifecycle/index.js';
import { freshDatabase } from '../support/database.js';
import { lifecycleEventArb } from '../support/lifecycle-arbitraries.js';
import {
  UNIT_PRICES,
  createTenant,
  creditWallet,
  ensureProvider,
  insertWallet,
  priceOf,
  publishPriceVersion,
  submitJob,
  uniqueName,
  type ProviderFixture,
} from '../support/fixtures.js';
import { assertLedgerInvariants } from '../support/invariants.js';

/**
 * Random operation sequences against the real database: credits (some repeated with
 * the same key), submissions (some refused), and every lifecycle event over a few
 * jobs and wallets, in steps whose operations run concurrently. After every sequence
 * the ledger invariants (test/support/invariants.ts) must hold.
 */
const db = await freshDatabase({ max: 12 });
afterEach(() => assertLedgerInvariants(db.pool));

let model: string;
let providers: ProviderFixture[];
beforeAll(async () => {
  model = uniqueName('model');
  await publishPriceVersion(db.pool, model, 'USD', { ...UNIT_PRICES });
  providers = [await ensureProvider(db.pool), await ensureProvider(db.pool, { policies: { failed_with_usage: 'capture' } })];
});

type Usage = Record<string, number>;
type Op =
  | { kind: 'credit'; wallet: number; key: number }
  | { kind: 'submit'; wallet: number; provider: number; limits: Usage }
  /** a submission that reserves all that is available: later upward corrections overdraw */
  | { kind: 'drain'; wallet: number }
  | { kind: 'event'; job: number; event: LifecycleEvent };

/** Small usage (a cheap capture that a later correction raises) as often as large (capped). */
const usageArb: fc.Arbitrary<Usage> = fc.oneof(
  fc.record({ input_tokens: fc.nat(100), output_tokens: fc.nat(20) }, { requiredKeys: ['input_tokens'] }),
  fc.record(
    { input_tokens: fc.integer({ min: 0, max: 3000 }), output_tokens: fc.integer({ min: 0, max: 1500 }), cached_tokens: fc.nat(100) },
    { requiredKeys: ['input_tokens'] },
  ),
);
const limitsArb = fc.record({ input_tokens: fc.integer({ min: 0, max: 2000 }), output_tokens: fc.integer({ min: 0, max: 1000 }) });

const eventArb = lifecycleEventArb(usageArb, { completed: 2, corrected: 4, maxCorrection: 4 });

const submitArb: fc.Arbitrary<Op> = fc.record({
  kind: fc.constant('submit' as const),
  wallet: fc.nat(1),
  provider: fc.nat(1),
  limits: limitsArb,
});

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('credit' as const), wallet: fc.nat(1), key: fc.nat(3) }) },
  { weight: 2, arbitrary: submitArb },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('drain' as const), wallet: fc.nat(1) }) },
  { weight: 10, arbitrary: fc.record({ kind: fc.constant('event' as const), job: fc.nat(7), event: eventArb }) },
);

/**
 * Steps of 1–4 operations; the operations of a step run concurrently. A first step
 * of submissions gives the events jobs to act on.
 */
const scenarioArb = fc
  .tuple(
    fc.array(submitArb, { minLength: 1, maxLength: 4 }),
    fc.array(fc.array(opArb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 12 }),
  )
  .map(([first, rest]) => [first, ...rest]);

interface Run {
  id: string;
  tenants: string[];
  wallets: AccountRow[];
  jobs: JobRow[];
}

async function execute(run: Run, op: Op): Promise<void> {
  switch (op.kind) {
    case 'credit': {
      // the same key always carries the same amount: a repeat is a retry, applied once
      await creditWallet(db.pool, run.wallets[op.wallet]!, BigInt(op.key + 1) * 3_000n, `${run.id}:${op.wallet}:${op.key}`);
      return;
    }
    case 'submit': {
      const wallet = run.wallets[op.wallet]!;
      try {
        const job = await submitJob(db.pool, {
          tenantId: wallet.tenant_id,
          wallet,
          provider: providers[op.provider]!,
          model,
          limits: op.limits,
        });
        run.jobs.push(job);
      } catch (error) {
        // limits that price to zero would bill nothing whatever the usage: refused, nothing held
        if (error instanceof InvalidLimits && priceOf(op.limits) === 0n) return;
        if (!(error instanceof InsufficientFunds)) throw error;
      }
      return;
    }
    case 'drain': {
      const wallet = run.wallets[op.wallet]!;
      const { rows } = await db.pool.query<{ available: bigint }>(
        'select credits_posted - debits_posted - debits_pending as available from accounts where id = $1',
        [wallet.id],
      );
      const available = rows[0]!.available;
      if (available <= 0n) return;
      const limits = { input_tokens: Number(available / 2n) }; // 2 micros per input token
      await execute(run, { kind: 'submit', wallet: op.wallet, provider: 0, limits });
      return;
    }
    case 'event': {
      if (run.jobs.length === 0) return;
      const job = run.jobs[op.job % run.jobs.length]!;
      await settle(db.pool, { jobId: job.id, event: op.event });
      return;
    }
  }
}

describe('ledger under random concurrent operation sequences', () => {
  it('keeps every invariant', { timeout: 60_000 }, async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(scenarioArb, fc.integer({ min: 0, max: 20_000 }), async (steps, initialFunds) => {
        runs++;
        const tenants = [await createTenant(db.pool), await createTenant(db.pool)];
        const wallets = [await insertWallet(db.pool, tenants[0]!), await insertWallet(db.pool, tenants[1]!)];
        const run: Run = { id: uniqueName('run'), tenants, wallets, jobs: [] };
        if (initialFunds > 0) for (const wallet of wallets) await creditWallet(db.pool, wallet, BigInt(initialFunds));
        for (const step of steps) await Promise.all(step.map((op) => execute(run, op)));
        await assertLedgerInvariants(db.pool);

        // Credits: each (wallet, key) once, whatever the repeats.
        for (const [i, wallet] of wallets.entries()) {
          const credited = await db.pool.query<{ n: number }>(
            `select count(*)::int as n from ledger_entries where credit_account_id = $1 and entry_type = 'credit' and settlement_key like $2`,
            [wallet.id, `%:${run.id}:${i}:%`],
          );
          const keys = new Set(
            steps
              .flat()
              .filter((op) => op.kind === 'credit' && op.wallet === i)
              .map((op) => (op as { key: number }).key),
          );
          expect(credited.rows[0]!.n).toBe(keys.size);
        }
      }),
      { numRuns: 150, endOnFailure: true },
    );
    expect(runs).toBe(150);
    // The sequences reached every financial phase, not just the easy paths.
    const phases = await db.pool.query<{ charge_type: string; n: number }>(
      'select charge_type, count(*)::int as n from settlements group by charge_type order by charge_type',
    );
    expect(phases.rows.map((r) => r.charge_type)).toEqual(['adjustment', 'capture', 'release']);
  });
});
