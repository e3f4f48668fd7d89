import { afterEach, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/transaction.js';
import { newId } from '../../src/ids.js';
import { walletBalances } from '../../src/funds/accounts.js';
import { listWalletEntries } from '../../src/funds/wallet-history.js';
import { CreditKeyConflict, InsufficientFunds, WalletNotFound } from '../../src/funds/errors.js';
import { settle } from '../../src/ledger/settle.js';
import { InvalidLimits, submitJob as submitInTx } from '../../src/jobs/submit.js';
import { freshDatabase } from '../support/database.js';
import {
  RESERVATION,
  UNIT_PRICES,
  billableOf,
  createTenant,
  createWorld,
  publishPriceVersion,
  uniqueName,
  creditWallet,
  insertWallet,
  jobRow,
  submitJob,
  submitWorldJob,
  walletRow,
} from '../support/fixtures.js';
import { assertLedgerInvariants } from '../support/invariants.js';

const db = await freshDatabase({ max: 24 });
afterEach(() => assertLedgerInvariants(db.pool));

async function countRows(sql: string, params: unknown[]): Promise<number> {
  const result = await db.pool.query<{ n: number }>(`select count(*)::int as n from (${sql}) x`, params);
  return result.rows[0]!.n;
}

describe('reservation', () => {
  it('refuses with InsufficientFunds and writes nothing: no job, no hold, no entry, projections unchanged', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION - 1n });
    const before = await walletRow(db.pool, world.wallet.id);
    const entriesBefore = await countRows('select 1 from ledger_entries where tenant_id = $1', [world.tenantId]);

    const refused = await submitWorldJob(db.pool, world).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InsufficientFunds);
    expect((refused as InsufficientFunds).requested).toBe(RESERVATION);

    expect(await countRows('select 1 from jobs where tenant_id = $1', [world.tenantId])).toBe(0);
    expect(await countRows('select 1 from holds where tenant_id = $1', [world.tenantId])).toBe(0);
    expect(await countRows('select 1 from ledger_entries where tenant_id = $1', [world.tenantId])).toBe(entriesBefore);
    const accounts = await db.pool.query('select * from accounts where tenant_id = $1 order by id', [world.tenantId]);
    expect(accounts.rows.find((a: { id: string }) => a.id === world.wallet.id)).toEqual(before);
    for (const account of accounts.rows as { kind: string; debits_pending: bigint; credits_pending: bigint }[]) {
      expect([account.kind, account.debits_pending, account.credits_pending]).toEqual([account.kind, 0n, 0n]);
    }
  });

  it('reserves exactly what is available under 20 concurrent submissions', async () => {
    const spare = 123n;
    const world = await createWorld(db.pool, { funds: RESERVATION * 5n + spare });
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => submitWorldJob(db.pool, world)));
    const accepted = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(accepted).toHaveLength(5);
    expect(refused).toHaveLength(15);
    for (const r of refused) expect(r.reason).toBeInstanceOf(InsufficientFunds);
    expect(walletBalances(await walletRow(db.pool, world.wallet.id))).toEqual({
      balance: RESERVATION * 5n + spare,
      reserved: RESERVATION * 5n,
      available: spare,
    });
    expect(await countRows('select 1 from jobs where tenant_id = $1', [world.tenantId])).toBe(5);
  });

  it("refuses another tenant's wallet (and a wallet in another currency) without writing", async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION * 2n });
    const intruder = await createTenant(db.pool);
    const wrongTenant = await withTransaction(db.pool, (tx) =>
      submitInTx(tx, { tenantId: intruder, wallet: world.wallet, provider: { name: world.provider.name, policies: {} }, model: world.model, limits: { input_tokens: 1 } }),
    ).catch((e: unknown) => e);
    expect(wrongTenant).toBeInstanceOf(WalletNotFound);
    const wrongCurrency = await withTransaction(db.pool, (tx) =>
      submitInTx(tx, {
        tenantId: world.tenantId,
        wallet: { id: world.wallet.id, currency: 'EUR' },
        provider: { name: world.provider.name, policies: {} },
        model: world.model,
        limits: { input_tokens: 1 },
      }),
    ).catch((e: unknown) => e);
    // no EUR price exists either, so this one stops at NoPrice: still nothing written
    expect(wrongCurrency).toBeInstanceOf(Error);
    expect(await countRows('select 1 from jobs where wallet_id = $1', [world.wallet.id])).toBe(0);
    expect(walletBalances(await walletRow(db.pool, world.wallet.id)).reserved).toBe(0n);
  });
});

describe('credits', () => {
  it('applies a credit key once, replays it after, and refuses it for another amount', async () => {
    const tenantId = await createTenant(db.pool);
    const wallet = await insertWallet(db.pool, tenantId);
    const key = newId();
    const first = await creditWallet(db.pool, wallet, 5_000_000n, key);
    const again = await creditWallet(db.pool, wallet, 5_000_000n, key);
    expect(first.replayed).toBe(false);
    expect(again.replayed).toBe(true);
    expect(again.entry).toEqual(first.entry);
    expect(first.entry.amount).toBe(5_000_000n);
    await expect(creditWallet(db.pool, wallet, 5_000_001n, key)).rejects.toBeInstanceOf(CreditKeyConflict);
    expect(walletBalances(await walletRow(db.pool, wallet.id)).balance).toBe(5_000_000n);
    expect(await countRows("select 1 from ledger_entries where credit_account_id = $1 and entry_type = 'credit'", [wallet.id])).toBe(1);
  });

  it("refuses a credit that names another tenant or currency for the wallet", async () => {
    const tenantId = await createTenant(db.pool);
    const other = await createTenant(db.pool);
    const wallet = await insertWallet(db.pool, tenantId);
    await insertWallet(db.pool, other); // the other tenant has a funding account in USD
    await expect(creditWallet(db.pool, { ...wallet, tenant_id: other }, 100n)).rejects.toBeInstanceOf(WalletNotFound);
    await expect(creditWallet(db.pool, { ...wallet, currency: 'EUR' }, 100n)).rejects.toBeInstanceOf(WalletNotFound);
    expect(walletBalances(await walletRow(db.pool, wallet.id)).balance).toBe(0n);
  });

  it('applies 20 concurrent credits with the same key as one entry', async () => {
    const tenantId = await createTenant(db.pool);
    const wallet = await insertWallet(db.pool, tenantId);
    const key = newId();
    const results = await Promise.all(Array.from({ length: 20 }, () => creditWallet(db.pool, wallet, 7_000n, key)));
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect(new Set(results.map((r) => r.entry.id)).size).toBe(1);
    expect(await countRows("select 1 from ledger_entries where credit_account_id = $1 and entry_type = 'credit'", [wallet.id])).toBe(1);
    expect(walletBalances(await walletRow(db.pool, wallet.id))).toEqual({ balance: 7_000n, reserved: 0n, available: 7_000n });
  });

  it('applies 20 concurrent credits with distinct keys as 20 entries', async () => {
    const tenantId = await createTenant(db.pool);
    const wallet = await insertWallet(db.pool, tenantId);
    await Promise.all(Array.from({ length: 20 }, (_, i) => creditWallet(db.pool, wallet, BigInt(i + 1))));
    expect(walletBalances(await walletRow(db.pool, wallet.id)).balance).toBe(210n);
  });
});

describe('balances (CONTRACT: balance = posted credits − posted debits, reserved = open holds, available = balance − reserved)', () => {
  it('follow a reservation, a capture and a release', async () => {
    const world = await createWorld(db.pool, { funds: 20_000n });
    const balances = async () => walletBalances(await walletRow(db.pool, world.wallet.id));
    expect(await balances()).toEqual({ balance: 20_000n, reserved: 0n, available: 20_000n });

    const captured = await submitWorldJob(db.pool, world);
    const released = await submitWorldJob(db.pool, world);
    expect(captured.reserved).toBe(RESERVATION);
    expect(await balances()).toEqual({ balance: 20_000n, reserved: 16_000n, available: 4_000n });

    const usage = { input_tokens: 700, output_tokens: 250 }; // 1400 + 1500
    const capture = await settle(db.pool, { jobId: captured.id, event: { type: 'job.completed', usage } });
    expect(capture).toMatchObject({ outcome: 'applied', jobState: 'captured', replayed: false });
    expect(capture.settlement).toMatchObject({ charge_type: 'capture', amount: 2_900n, remainder: RESERVATION - 2_900n });
    expect(await balances()).toEqual({ balance: 17_100n, reserved: 8_000n, available: 9_100n });

    const release = await settle(db.pool, { jobId: released.id, event: { type: 'job.failed' } });
    expect(release).toMatchObject({ outcome: 'applied', jobState: 'released', reason: 'job_failed' });
    expect(await balances()).toEqual({ balance: 17_100n, reserved: 0n, available: 17_100n });

    expect(await jobRow(db.pool, captured.id)).toMatchObject({ state: 'captured', captured: 2_900n, released: 5_100n, adjusted: 0n });
    expect(await jobRow(db.pool, released.id)).toMatchObject({ state: 'released', captured: 0n, released: RESERVATION });

    // The wallet's entries, newest first, signed from its side: voids give held money back.
    const entries = await listWalletEntries(db.pool, world.wallet.id, { limit: 100, cursor: null });
    expect(entries.map((e) => [e.entryType, e.amount])).toEqual([
      ['release', RESERVATION],
      ['release_remainder', 5_100n],
      ['capture', -2_900n],
      ['reserve', -RESERVATION],
      ['reserve', -RESERVATION],
      ['credit', 20_000n],
    ]);
    const sum = (types: string[]) => entries.filter((e) => types.includes(e.entryType)).reduce((a, e) => a + e.amount, 0n);
    const now = walletBalances(await walletRow(db.pool, world.wallet.id));
    expect(sum(['credit', 'capture', 'adjustment'])).toBe(now.balance);
    expect(sum(['credit', 'reserve', 'release', 'release_remainder', 'adjustment'])).toBe(now.available);
  });

  it('caps a capture at the reservation and raises usage_exceeds_reservation', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    const usage = { input_tokens: 5000, output_tokens: 5000 };
    const result = await settle(db.pool, { jobId: job.id, event: { type: 'job.completed', usage } });
    expect(result.settlement?.amount).toBe(billableOf(usage));
    expect(result.settlement?.amount).toBe(RESERVATION);
    expect(result.alerts).toEqual(['usage_exceeds_reservation']);
    const alerts = await db.pool.query('select class from alerts where job_id = $1', [job.id]);
    expect(alerts.rows).toEqual([{ class: 'usage_exceeds_reservation' }]);
  });

  it('posts charges for delivered work below zero and raises wallet_overdrawn', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const first = await submitWorldJob(db.pool, world);
    await settle(db.pool, { jobId: first.id, event: { type: 'job.completed', usage: { input_tokens: 500 } } }); // 1000
    // available is 7000: a second job reserves exactly that
    const second = await submitWorldJob(db.pool, world, { input_tokens: 3500 });
    expect(second.reserved).toBe(7_000n);
    // a correction charges the first job up to its reservation: balance 0, available −7000
    const corrected = await settle(db.pool, {
      jobId: first.id,
      event: { type: 'job.usage_corrected', correction: 1, usage: { input_tokens: 1000, output_tokens: 1000 } },
    });
    expect(corrected.settlement).toMatchObject({ charge_type: 'adjustment', version: 1, amount: 7_000n });
    expect(walletBalances(await walletRow(db.pool, world.wallet.id))).toEqual({ balance: 0n, reserved: 7_000n, available: -7_000n });
    // no new reservation passes while available is negative
    await expect(submitWorldJob(db.pool, world, { input_tokens: 1 })).rejects.toBeInstanceOf(InsufficientFunds);
    // the second job's capture still posts, taking the balance below zero
    const capture = await settle(db.pool, { jobId: second.id, event: { type: 'job.completed', usage: { input_tokens: 3500 } } });
    expect(capture.settlement?.amount).toBe(7_000n);
    expect(capture.alerts).toEqual(['wallet_overdrawn']);
    expect(walletBalances(await walletRow(db.pool, world.wallet.id))).toEqual({ balance: -7_000n, reserved: 0n, available: -7_000n });
    // a refund brings it back; the alert stays on record
    const refund = await settle(db.pool, {
      jobId: first.id,
      event: { type: 'job.usage_corrected', correction: 2, usage: { input_tokens: 0 } },
    });
    expect(refund.settlement?.amount).toBe(-8_000n);
    expect(refund.alerts).toEqual([]);
    expect(walletBalances(await walletRow(db.pool, world.wallet.id)).balance).toBe(1_000n);
  });

  it('a job whose limits price to zero is refused (invalid_limits), and nothing is written', async () => {
    const world = await createWorld(db.pool, { funds: 1n });
    await publishPriceVersion(db.pool, world.model, 'USD', { ...UNIT_PRICES, cached_tokens: 0n });
    const jobsBefore = await countRows('select 1 from jobs where tenant_id = $1', [world.tenantId]);
    // Priced at zero, or zero units of a priced dimension: either would hold nothing and bill nothing.
    for (const limits of [{ cached_tokens: 10_000 }, { input_tokens: 0 }, { input_tokens: 0, cached_tokens: 5 }] as Record<string, number>[]) {
      const refused = await submitWorldJob(db.pool, world, limits).catch((error: unknown) => error);
      expect(refused, JSON.stringify(limits)).toBeInstanceOf(InvalidLimits);
      expect((refused as InvalidLimits).message).toContain('reserve 0.000000');
    }
    expect(await countRows('select 1 from jobs where tenant_id = $1', [world.tenantId])).toBe(jobsBefore);
    expect(walletBalances(await walletRow(db.pool, world.wallet.id))).toMatchObject({ balance: 1n, reserved: 0n });
  });

  it('usage that prices to zero captures nothing and releases the whole hold', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    await publishPriceVersion(db.pool, world.model, 'USD', { ...UNIT_PRICES, cached_tokens: 0n });
    const job = await submitWorldJob(db.pool, world);
    const result = await settle(db.pool, { jobId: job.id, event: { type: 'job.completed', usage: { cached_tokens: 5 } } });
    expect(result.settlement).toMatchObject({ amount: 0n, remainder: job.reserved });
    expect(walletBalances(await walletRow(db.pool, world.wallet.id))).toMatchObject({ balance: RESERVATION, reserved: 0n });
  });
});

describe('settle outcomes', () => {
  it('a repeated completion returns the first settlement; a failure after the capture has no effect of its own', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    const first = await settle(db.pool, { jobId: job.id, event: { type: 'job.completed', usage: { input_tokens: 10 } } });
    const second = await settle(db.pool, { jobId: job.id, event: { type: 'job.completed', usage: { input_tokens: 999 } } });
    expect(second).toMatchObject({ outcome: 'no_effect', reason: 'job_already_captured', jobState: 'captured', replayed: true });
    expect(second.settlement).toEqual(first.settlement);
    const failed = await settle(db.pool, { jobId: job.id, event: { type: 'job.failed' } });
    expect(failed).toMatchObject({ outcome: 'no_effect', jobState: 'captured', settlement: null, replayed: false });
  });

  it('a completion after a release bills nothing and raises late_success_after_release', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    await settle(db.pool, { jobId: job.id, event: { type: 'cancel.requested' } });
    const released = await settle(db.pool, { jobId: job.id, event: { type: 'cancel.grace_elapsed' } });
    expect(released).toMatchObject({ outcome: 'applied', jobState: 'released', reason: 'cancel_grace_elapsed' });
    const late = await settle(db.pool, { jobId: job.id, event: { type: 'job.completed', usage: { input_tokens: 10 } } });
    expect(late).toMatchObject({ outcome: 'no_effect', jobState: 'released', settlement: null, alerts: ['late_success_after_release'] });
    expect(walletBalances(await walletRow(db.pool, world.wallet.id))).toEqual({ balance: RESERVATION, reserved: 0n, available: RESERVATION });
  });
});

describe('settle outcomes of corrections', () => {
  it('a redelivered correction returns its adjustment; an older one is stale', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    await settle(db.pool, { jobId: job.id, event: { type: 'job.completed', usage: { input_tokens: 100 } } });
    const second = { type: 'job.usage_corrected', correction: 2, usage: { input_tokens: 300 } } as const;
    const applied = await settle(db.pool, { jobId: job.id, event: second });
    expect(applied).toMatchObject({ outcome: 'applied', replayed: false });
    expect(applied.settlement).toMatchObject({ charge_type: 'adjustment', version: 2, amount: 400n });
    const again = await settle(db.pool, { jobId: job.id, event: { ...second, usage: { input_tokens: 9 } } });
    expect(again).toMatchObject({ outcome: 'stale', reason: 'correction_not_newer', replayed: true });
    expect(again.settlement?.id).toBe(applied.settlement!.id);
    const older = await settle(db.pool, { jobId: job.id, event: { type: 'job.usage_corrected', correction: 1, usage: { input_tokens: 5 } } });
    expect(older).toMatchObject({ outcome: 'stale', settlement: null, replayed: false });
    expect(await jobRow(db.pool, job.id)).toMatchObject({ captured: 200n, adjusted: 400n, highest_correction: 2 });
  });
});

describe('price versions', () => {
  it('20 concurrent publishers of one model get versions 1..20, each once', async () => {
    const model = uniqueName('model');
    const rows = await Promise.all(
      Array.from({ length: 20 }, (_, i) => publishPriceVersion(db.pool, model, 'USD', { input_tokens: BigInt(i + 1) * 1_000_000n })),
    );
    expect(rows.map((r) => r.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });
});
