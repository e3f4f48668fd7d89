import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/transaction.js';
import { newId } from '../../src/ids.js';
import { InsufficientFunds } from '../../src/funds/errors.js';
import { AmountOutOfRange, MAX_AMOUNT_MICROS } from '../../src/money/index.js';
import { createGrant, expireGrant, voidGrant, type GrantRequest } from '../../src/funds/grant-writes.js';
import { postRefundToPayer, reverseRefund } from '../../src/funds/payments/payment-writes.js';
import { settle } from '../../src/ledger/settle.js';
import type { AccountRow } from '../../src/funds/accounts.js';
import { freshDatabase } from '../support/database.js';
import {
  UNIT_PRICES,
  createTenant,
  creditWallet,
  ensureProvider,
  insertWallet,
  publishPriceVersion,
  submitJob,
  uniqueName,
  type ProviderFixture,
} from '../support/fixtures.js';
import { assertLedgerInvariants } from '../support/invariants.js';

/**
 * Grants as sub-accounts of a wallet (CONTRACT.md "Credit grants"), through the ledger's
 * own writers on the real database: holds split across grants in draw-down order,
 * captures consume shares in allocation order, expiry funds nothing from its instant on
 * and posts once, voids, debt paid first by money that enters. The ledger invariants
 * (grants = wallet, shares = holds, grants = their entries) are checked after every test.
 */
const db = await freshDatabase({ max: 45 });
afterEach(() => assertLedgerInvariants(db.pool));

let model: string;
let provider: ProviderFixture;
beforeAll(async () => {
  model = uniqueName('model');
  await publishPriceVersion(db.pool, model, 'USD', { ...UNIT_PRICES });
  provider = await ensureProvider(db.pool);
});

async function newWallet(): Promise<AccountRow> {
  return insertWallet(db.pool, await createTenant(db.pool));
}

function grant(wallet: AccountRow, amount: bigint, terms: Partial<GrantRequest> = {}) {
  return withTransaction(db.pool, (tx) =>
    createGrant(tx, { wallet, amount, category: 'promotional', priority: 50, grantKey: `${wallet.tenant_id}:grant:${newId()}`, ...terms }),
  );
}

/** A job reserving `micros` (input tokens at 2 micros each: UNIT_PRICES). */
function reserve(wallet: AccountRow, micros: bigint) {
  return submitJob(db.pool, { tenantId: wallet.tenant_id, wallet, provider, model, limits: { input_tokens: Number(micros / 2n) } });
}

async function shares(jobId: string) {
  const result = await db.pool.query<{ grant_id: string; held: bigint; captured: bigint; returned: bigint }>(
    'select grant_id, held, captured, returned from hold_shares where job_id = $1 order by position',
    [jobId],
  );
  return result.rows.map((r) => ({ grant: r.grant_id, held: r.held, captured: r.captured, returned: r.returned }));
}

async function grantAmounts(id: string) {
  const result = await db.pool.query<{ remaining: bigint; held: bigint; expired_amount: bigint; voided_amount: bigint }>(
    'select remaining, held, expired_amount, voided_amount from grants where id = $1',
    [id],
  );
  return result.rows[0]!;
}

describe('holds allocate across grants', () => {
  it('draws lowest priority first, then soonest expiry, then promotional before paid; the capture consumes in allocation order', async () => {
    const wallet = await newWallet();
    const paid = (await creditWallet(db.pool, wallet, 3_000n)).entry.grantId!;
    const later = (await grant(wallet, 1_000n, { expiresAt: new Date(Date.now() + 7 * 86_400_000).toISOString() })).grant.id;
    const sooner = (await grant(wallet, 1_000n, { expiresAt: new Date(Date.now() + 86_400_000).toISOString() })).grant.id;
    const first = (await grant(wallet, 500n, { priority: 10, category: 'paid' })).grant.id;

    const job = await reserve(wallet, 4_000n);
    expect(await shares(job.id)).toEqual([
      { grant: first, held: 500n, captured: 0n, returned: 0n },
      { grant: sooner, held: 1_000n, captured: 0n, returned: 0n },
      { grant: later, held: 1_000n, captured: 0n, returned: 0n },
      { grant: paid, held: 1_500n, captured: 0n, returned: 0n },
    ]);
    await settle(db.pool, { jobId: job.id, event: { type: 'job.completed', usage: { input_tokens: 1_000 } } }); // 2,000 micros
    expect(await shares(job.id)).toEqual([
      { grant: first, held: 500n, captured: 500n, returned: 0n },
      { grant: sooner, held: 1_000n, captured: 1_000n, returned: 0n },
      { grant: later, held: 1_000n, captured: 500n, returned: 500n },
      { grant: paid, held: 1_500n, captured: 0n, returned: 1_500n },
    ]);
    expect(await grantAmounts(later)).toMatchObject({ remaining: 500n, held: 0n });
    // The capture is one entry per grant under one settlement.
    const entries = await db.pool.query<{ grant_id: string; amount: bigint }>(
      `select grant_id, amount from ledger_entries where job_id = $1 and entry_type = 'capture' order by amount`,
      [job.id],
    );
    expect(entries.rows.map((r) => [r.grant_id, r.amount])).toEqual([
      [first, 500n],
      [later, 500n],
      [sooner, 1_000n],
    ]);
  });

  it('40 concurrent reservations across 3 grants never over-allocate a grant', async () => {
    const wallet = await newWallet();
    await grant(wallet, 10_000n, { priority: 20 });
    await grant(wallet, 7_000n, { priority: 30 });
    await creditWallet(db.pool, wallet, 13_000n);
    const outcomes = await Promise.allSettled(Array.from({ length: 40 }, () => reserve(wallet, 1_000n)));
    const refused = outcomes.filter((o) => o.status === 'rejected');
    for (const o of refused) expect((o as PromiseRejectedResult).reason).toBeInstanceOf(InsufficientFunds);
    expect(outcomes.length - refused.length).toBe(30);
    const held = await db.pool.query<{ priority: number; remaining: bigint; held: bigint }>(
      'select priority, remaining, held from grants where wallet_id = $1 order by priority',
      [wallet.id],
    );
    expect(held.rows.map((r) => [r.priority, r.remaining, r.held])).toEqual([
      [20, 10_000n, 10_000n],
      [30, 7_000n, 7_000n],
      [50, 13_000n, 13_000n],
    ]);
  });
});

describe('expiry', () => {
  it('a grant funds nothing from its expires_at on, before its sweep posts; the sweep posts its unheld remaining once', async () => {
    const wallet = await newWallet();
    const created = await grant(wallet, 5_000n);
    // Its expiry 1 ms ago by the database's clock (a grant cannot be created past its expiry); no sweep has run.
    await db.pool.query(`update grants set expires_at = clock_timestamp() - interval '1 millisecond' where id = $1`, [created.grant.id]);
    await expect(reserve(wallet, 2_000n)).rejects.toBeInstanceOf(InsufficientFunds);

    const lapsed = await withTransaction(db.pool, (tx) => expireGrant(tx, created.grant.id));
    expect(lapsed).toBe(5_000n);
    expect(await withTransaction(db.pool, (tx) => expireGrant(tx, created.grant.id))).toBeNull();
    expect(await grantAmounts(created.grant.id)).toMatchObject({ remaining: 0n, expired_amount: 5_000n });
    const entries = await db.pool.query(`select 1 from ledger_entries where grant_id = $1 and entry_type = 'grant_expiry'`, [
      created.grant.id,
    ]);
    expect(entries.rowCount).toBe(1);
  });

  it('a share still held at expiry stays with its job; what it returns leaves at once as grant_expiry', async () => {
    const wallet = await newWallet();
    const created = await grant(wallet, 5_000n);
    const job = await reserve(wallet, 4_000n);
    await db.pool.query(`update grants set expires_at = clock_timestamp() where id = $1`, [created.grant.id]);
    expect(await withTransaction(db.pool, (tx) => expireGrant(tx, created.grant.id))).toBe(1_000n);
    await settle(db.pool, { jobId: job.id, event: { type: 'job.completed', usage: { input_tokens: 500 } } }); // 1,000 captured
    expect(await grantAmounts(created.grant.id)).toMatchObject({ remaining: 0n, held: 0n, expired_amount: 4_000n });
  });
});

describe('limits', () => {
  it("refuses a grant that would take the wallet's balance past the largest amount, writing nothing", async () => {
    const wallet = await newWallet();
    await creditWallet(db.pool, wallet, 1_000n);
    await expect(grant(wallet, MAX_AMOUNT_MICROS)).rejects.toBeInstanceOf(AmountOutOfRange);
    expect((await db.pool.query('select 1 from grants where wallet_id = $1', [wallet.id])).rowCount).toBe(1);
  });
});

describe('voids and debt', () => {
  it('a void takes the unheld remaining at once, and a second void is refused', async () => {
    const wallet = await newWallet();
    const created = await grant(wallet, 5_000n);
    await reserve(wallet, 1_000n);
    await withTransaction(db.pool, (tx) => voidGrant(tx, created.grant.id, 'issued by mistake'));
    expect(await grantAmounts(created.grant.id)).toMatchObject({ remaining: 1_000n, held: 1_000n, voided_amount: 4_000n });
    await expect(withTransaction(db.pool, (tx) => voidGrant(tx, created.grant.id, 'again'))).rejects.toMatchObject({
      code: 'grant_voided',
    });
  });

  it('a charge beyond every grant is debt; the next credit pays it first', async () => {
    const wallet = await newWallet();
    await creditWallet(db.pool, wallet, 2_000n);
    const job = await reserve(wallet, 2_000n);
    await settle(db.pool, { jobId: job.id, event: { type: 'job.completed', usage: { input_tokens: 500 } } }); // 1,000, 1,000 returned
    await reserve(wallet, 1_000n); // the returned funds, spent
    await settle(db.pool, { jobId: job.id, event: { type: 'job.usage_corrected', correction: 1, usage: { input_tokens: 1_000 } } }); // +1,000
    const debt = async () => (await db.pool.query<{ debt: bigint }>('select debt from accounts where id = $1', [wallet.id])).rows[0]!.debt;
    expect(await debt()).toBe(1_000n);
    const credited = await creditWallet(db.pool, wallet, 5_000n);
    expect(await debt()).toBe(0n);
    expect(await grantAmounts(credited.entry.grantId!)).toMatchObject({ remaining: 4_000n });
  });
});

describe('money paid back to the payer', () => {
  it('a refund takes the unheld remaining, the rest as debt, once; its reversal brings it back once, paying the debt first', async () => {
    const wallet = await newWallet();
    const paid = (await creditWallet(db.pool, wallet, 3_000n)).entry.grantId!;
    await reserve(wallet, 2_000n);
    const refund = { grantId: paid, amount: 2_500n, settlementKey: `${wallet.tenant_id}:refund:re_${newId()}`, entry: 'refund' as const };
    expect(await withTransaction(db.pool, (tx) => postRefundToPayer(tx, refund))).toBe(true);
    expect(await withTransaction(db.pool, (tx) => postRefundToPayer(tx, refund))).toBe(false);
    const debt = async () => (await db.pool.query<{ debt: bigint }>('select debt from accounts where id = $1', [wallet.id])).rows[0]!.debt;
    expect(await grantAmounts(paid)).toMatchObject({ remaining: 2_000n, held: 2_000n });
    expect(await debt()).toBe(1_500n);
    expect(await withTransaction(db.pool, (tx) => reverseRefund(tx, refund))).toBe(true);
    expect(await withTransaction(db.pool, (tx) => reverseRefund(tx, refund))).toBe(false);
    expect(await debt()).toBe(0n);
    expect(await grantAmounts(paid)).toMatchObject({ remaining: 3_000n, held: 2_000n });
  });
});
