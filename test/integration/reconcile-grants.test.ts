import { describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/transaction.js';
import { activateDueGrants, expireDueGrants } from '../../src/duties/grant-duties.js';
import { newId } from '../../src/ids.js';
import { createGrant, voidGrant, type GrantRequest } from '../../src/funds/grant-writes.js';
import { postRefundToPayer, reverseRefund } from '../../src/funds/payments/payment-writes.js';
import { findInconsistencies } from '../../src/reconcile/checks.js';
import { repair } from '../../src/reconcile/repair.js';
import { reconcile, resolveException } from '../../src/reconcile/run.js';
import { creditWallet, jobRow } from '../support/fixtures.js';
import { assertLedgerInvariants } from '../support/invariants.js';
import {
  count,
  createWorld,
  databasePerTest,
  deliver,
  drain,
  event,
  expectClean,
  expectFoundTwice,
  expectNoRepair,
  expectOnly,
  expectResolvedMakesClean,
  ledgerFingerprint,
  submitJob,
  type World,
} from '../support/reconcile-world.js';

/**
 * The grants' reconciliation classes (CONTRACT.md "Credit grants"): grant_drift,
 * grant_expiry_overdue, allocation_mismatch. Each is found on a database broken on
 * purpose with SQL (grants and shares are ordinary rows; ledger_entries stays append-only),
 * found again as the same exception, and not found on a clean one; grant_expiry_overdue
 * is repaired by the sweep's keyed writer, exactly once; the other two are reported only.
 */
const scratch = databasePerTest();
const db = () => scratch.current.pool;
const resolve = (id: string, note: string) => resolveException(db(), id, note);

const USAGE = { input_tokens: 300, output_tokens: 200 }; // 300·2 + 200·6 = 1,800 micros; a job reserves 8,000

function grant(world: World, amount: bigint, terms: Partial<GrantRequest> = {}) {
  return withTransaction(db(), (tx) =>
    createGrant(tx, {
      wallet: world.wallet,
      amount,
      category: 'promotional',
      priority: 50,
      grantKey: `${world.tenantId}:grant:${newId()}`,
      ...terms,
    }),
  ).then((outcome) => outcome.grant.id);
}

/** Past its expiry by `seconds` (moved back by hand: a grant cannot be created expired). */
async function expiredAgo(grantId: string, seconds: number): Promise<void> {
  await db().query(
    `update grants set effective_at = least(effective_at, clock_timestamp() - make_interval(secs => $2 + 60)),
                       expires_at = clock_timestamp() - make_interval(secs => $2) where id = $1`,
    [grantId, seconds],
  );
}

async function creditGrantOf(world: World): Promise<string> {
  const found = await db().query<{ id: string }>(
    `select id from grants where wallet_id = $1 and source = 'credit' order by created_at limit 1`,
    [world.wallet.id],
  );
  return found.rows[0]!.id;
}

async function settled(world: World, job: { id: string }, type: string, data: Record<string, unknown> = {}) {
  await deliver(db(), world, event(world, job, type, data));
  await drain(db());
}

describe('a consistent database', () => {
  it('grants of every kind, their holds, captures, returns after expiry, voids, debt, refunds: clean, run after run', async () => {
    const world = await createWorld(db(), { funds: 10_000n });
    await grant(world, 5_000n, { priority: 10, expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    const second = await grant(world, 3_000n, { priority: 20 });
    const voided = await grant(world, 1_000n, { priority: 90 });
    await withTransaction(db(), (tx) => voidGrant(tx, voided, 'issued by mistake'));
    const scheduled = await grant(world, 2_000n, { effectiveAt: new Date(Date.now() + 3_600_000).toISOString() });
    await db().query(`update grants set effective_at = clock_timestamp() - interval '1 second' where id = $1`, [scheduled]);
    expect(await activateDueGrants(db())).toMatchObject({ moved: 1 });

    const captured = await submitJob(db(), world); // 5,000 on the first grant, 3,000 on the second
    await settled(world, captured, 'job.completed', { usage: USAGE });
    const held = await submitJob(db(), world); // 3,200 on the first, 3,000 on the second, 1,800 on the activated one
    // The second grant expires with all of it held: nothing lapses now; the job's return leaves at once.
    await expiredAgo(second, 1);
    expect(await expireDueGrants(db())).toMatchObject({ moved: 1 });
    await settled(world, held, 'job.completed', { usage: USAGE });
    const failed = await submitJob(db(), world);
    await settled(world, failed, 'job.failed');
    const corrected = await submitJob(db(), world);
    await settled(world, corrected, 'job.completed', { usage: USAGE });
    await settled(world, corrected, 'job.usage_corrected', { correction: 1, usage: { input_tokens: 900, output_tokens: 500 } });
    await settled(world, corrected, 'job.usage_corrected', { correction: 2, usage: { input_tokens: 10, output_tokens: 10 } });
    const open = await submitJob(db(), world);
    expect((await jobRow(db(), open.id)).state).toBe('reserved');

    // Debt, paid by the next credit; a refund to the payer and its reversal.
    const poor = await createWorld(db(), { funds: 2_000n });
    const spent = await submitJob(db(), poor, { limits: { input_tokens: 1_000 } }); // 2,000
    await settled(poor, spent, 'job.completed', { usage: { input_tokens: 500 } }); // 1,000 back
    await submitJob(db(), poor, { limits: { input_tokens: 500 } }); // the 1,000 back, held
    await settled(poor, spent, 'job.usage_corrected', { correction: 1, usage: { input_tokens: 1_000 } }); // +1,000: debt
    const paying = (await creditWallet(db(), poor.wallet, 5_000n)).entry.grantId!;
    const refund = { grantId: paying, amount: 700n, settlementKey: `${poor.tenantId}:refund:re_${newId()}` };
    await withTransaction(db(), (tx) => postRefundToPayer(tx, { ...refund, entry: 'refund' }));
    await withTransaction(db(), (tx) => reverseRefund(tx, refund));

    await assertLedgerInvariants(db());
    expectClean(await reconcile(db()));
    expectClean(await reconcile(db()));
    expect(
      await count(db(), `select 1 from ledger_entries where entry_type in ('grant_expiry', 'grant_void', 'debt_repayment', 'refund')`),
    ).toBe(4);
  });
});

describe('grant_drift', () => {
  it("a grant's remaining that its entries do not give (forged): named with its wallet and tenant, found again, not repaired", async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    await submitJob(db(), world); // an open hold on the grant
    const paid = await creditGrantOf(world);
    await db().query('update grants set remaining = remaining + 1 where id = $1', [paid]);

    const [found] = await expectFoundTwice(db(), 'grant_drift');
    expect(found!.objects).toEqual({ grant_id: paid, wallet_id: world.wallet.id, tenant_id: world.tenantId });
    expect(found!.detail).toEqual({
      currency: 'USD',
      grant: { remaining: '0.100001', held: '0.008000' },
      entries: { remaining: '0.100000', held: '0.008000' },
      shares: { held: '0.008000' },
    });
    await expectNoRepair(db(), [found!]);
    await expectResolvedMakesClean(db(), [found!], resolve);
  });

  it("a grant's held that neither its entries nor its open shares give", async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const promo = await grant(world, 6_000n, { priority: 10 });
    await submitJob(db(), world); // 6,000 on the promotional grant, 2,000 on the credit
    await db().query('update grants set held = held - 1 where id = $1', [promo]);

    const [found] = await expectFoundTwice(db(), 'grant_drift');
    expect(found!.objects).toMatchObject({ grant_id: promo });
    expect(found!.detail).toMatchObject({ grant: { held: '0.005999' }, entries: { held: '0.006000' }, shares: { held: '0.006000' } });
  });
});

describe('grant_expiry_overdue', () => {
  it('past expires_at by over a minute with unheld remaining: found again as the same; --repair expires it through the keyed writer, once', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const overdue = await grant(world, 5_000n, { priority: 10 });
    const late = await grant(world, 700n, { priority: 20 });
    const allHeld = await grant(world, 8_000n, { priority: 5 });
    const job = await submitJob(db(), world); // all 8,000 on allHeld: nothing unheld there
    await expiredAgo(overdue, 120);
    await expiredAgo(late, 30); // within the minute: the sweep still has time
    await expiredAgo(allHeld, 300); // nothing unheld to lapse

    const [found] = await expectFoundTwice(db(), 'grant_expiry_overdue');
    expect(found!.objects).toEqual({ grant_id: overdue, wallet_id: world.wallet.id, tenant_id: world.tenantId });
    expect(found!.detail).toMatchObject({ currency: 'USD', remaining: '0.005000', held: '0.000000' });
    expect(found!.detail.overdue_seconds).toBeGreaterThanOrEqual(120);

    const run = await reconcile(db(), { repair: true });
    expect(run.repairs).toEqual([
      {
        class: 'grant_expiry_overdue',
        fingerprint: `grant_expiry_overdue:${overdue}`,
        action: 'expire_grant',
        result: 'expired: 0.005000 lapsed',
      },
    ]);
    expectClean(run);
    const expiry = await db().query<{ settlement_key: string; amount: bigint }>(
      `select settlement_key, amount from ledger_entries where grant_id = $1 and entry_type = 'grant_expiry'`,
      [overdue],
    );
    expect(expiry.rows).toEqual([{ settlement_key: `${world.tenantId}:grant:${overdue}:expiry`, amount: 5_000n }]);
    await assertLedgerInvariants(db());

    // The same finding repaired again (a stale run, a second operator): nothing more is posted.
    const before = await ledgerFingerprint(db());
    expect(await repair(db(), [{ class: 'grant_expiry_overdue', fingerprint: found!.id, objects: found!.objects, detail: {} }])).toEqual([
      expect.objectContaining({ action: 'expire_grant', result: 'skipped: its expiry has posted' }),
    ]);
    expect(await ledgerFingerprint(db())).toEqual(before);
    expect((await reconcile(db(), { repair: true })).repairs).toEqual([]);
    expect((await jobRow(db(), job.id)).state).toBe('reserved');
  });
});

describe('allocation_mismatch', () => {
  it('a captured job whose shares say they captured other than its capture posted (forged)', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    await grant(world, 5_000n, { priority: 10 });
    const job = await submitJob(db(), world); // 5,000 on the promotional grant, 3,000 on the credit
    await settled(world, job, 'job.completed', { usage: USAGE });
    await db().query('update hold_shares set captured = captured + 1, returned = returned - 1 where job_id = $1 and position = 0', [
      job.id,
    ]);

    const [found] = await expectFoundTwice(db(), 'allocation_mismatch');
    expect(found!.objects).toEqual({ job_id: job.id, wallet_id: world.wallet.id, tenant_id: world.tenantId });
    expect(found!.detail).toMatchObject({
      currency: 'USD',
      disagree: ['captured', 'returned'],
      hold: { amount: '0.008000', posted: '0.001800', voided: '0.006200' },
      shares: [
        expect.objectContaining({ held: '0.005000', captured: '0.001801', returned: '0.003199' }),
        expect.objectContaining({ held: '0.003000', captured: '0.000000', returned: '0.003000' }),
      ],
    });
    await expectNoRepair(db(), [found!]);
    await expectResolvedMakesClean(db(), [found!], resolve);
  });

  it('a released job whose shares hold more than its hold', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    await settled(world, job, 'job.failed');
    await db().query('update hold_shares set held = held + 5 where job_id = $1', [job.id]);
    const [found] = await expectFoundTwice(db(), 'allocation_mismatch');
    expect(found!.detail).toMatchObject({ disagree: ['held'] });
  });

  it("an open hold's share changed: the job's allocation and its grant's held are both reported", async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    await db().query('update hold_shares set held = held - 1 where job_id = $1', [job.id]);
    const found = await findInconsistencies(db());
    expect(found.map((f) => [f.class, f.objects.job_id ?? f.objects.grant_id]).sort()).toEqual([
      ['allocation_mismatch', job.id],
      ['grant_drift', await creditGrantOf(world)],
    ]);
    expectOnly(await reconcile(db(), { classes: ['allocation_mismatch'] }), 'allocation_mismatch');
  });

  it('an open hold whose one share says it captured before any capture (forged)', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    await submitJob(db(), world); // its neighbour agrees
    await db().query('update hold_shares set captured = 1 where job_id = $1', [job.id]);
    const [found] = expectOnly(await reconcile(db(), { classes: ['allocation_mismatch'] }), 'allocation_mismatch');
    expect(found!.objects).toMatchObject({ job_id: job.id });
    expect(found!.detail).toMatchObject({ disagree: ['moved_while_open'], hold: { amount: '0.008000', posted: null, voided: null } });
  });
});
