import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/pool.js';
import { withTransaction } from '../../src/db/transaction.js';
import { newId } from '../../src/ids.js';
import { settle } from '../../src/ledger/settle.js';
import { settleBatch } from '../../src/ledger/settle-batch.js';
import { deleteThreshold, insertThreshold } from '../../src/funds/thresholds.js';
import { findInconsistencies } from '../../src/reconcile/checks.js';
import { freshDatabase } from '../support/database.js';
import { createWorld, creditWallet, insertClaimedEvent, submitWorldJob, walletRow, type World } from '../support/fixtures.js';
import { lockWaiters } from '../support/gate.js';
import { assertLedgerInvariants } from '../support/invariants.js';

const db = await freshDatabase({ max: 24 });
// Holds a wallet's lock on a connection of its own, outside the contenders' pool.
const gatePool = createPool(db.url, { max: 2 });
afterAll(() => gatePool.end());
afterEach(async () => {
  await assertLedgerInvariants(db.pool);
  expect(await findInconsistencies(db.pool, ['spend_period_drift', 'running_balance_drift'])).toEqual([]);
});

/** An endpoint of the tenant listening to every type: messages are written for tenants that listen. */
async function listen(world: World): Promise<void> {
  await db.pool.query(
    `insert into webhook_endpoints (id, tenant_id, url, events, secret) values ($1, $2, 'https://hooks.example.com/t', '{*}', 'whsec_dGVzdHRlc3R0ZXN0dGVzdA==')`,
    [newId(), world.tenantId],
  );
}

async function balanceLow(world: World) {
  const result = await db.pool.query<{ data: Record<string, string> }>(
    `select payload->'data' as data from outbound_messages where tenant_id = $1 and type = 'wallet.balance_low' order by id`,
    [world.tenantId],
  );
  return result.rows.map((r) => r.data);
}

async function threshold(world: World, amount: bigint) {
  const outcome = await withTransaction(db.pool, (tx) => insertThreshold(tx, world.wallet.id, world.tenantId, amount));
  if (!('created' in outcome)) throw new Error(`threshold refused: ${outcome.refused}`);
  return outcome.created;
}

const available = async (world: World) => {
  const w = await walletRow(db.pool, world.wallet.id);
  return w.credits_posted - w.debits_posted - w.debits_pending;
};
const armed = async (id: string) =>
  (await db.pool.query<{ armed: boolean }>('select armed from wallet_thresholds where id = $1', [id])).rows[0]!.armed;
const micros = (n: bigint) => `0.${n.toString().padStart(6, '0')}`;

describe('balance thresholds', () => {
  it('one batch going below, back above and below again announces each fall, in the order of its entries', async () => {
    // Reservations of 8000 µ; captures at 1000 µ release the other 7000; a correction to
    // the limits charges the 7000 more (an adjustment: available falls).
    const world = await createWorld(db.pool, { funds: 100_000n });
    await listen(world);
    const [first, released, third] = [
      await submitWorldJob(db.pool, world),
      await submitWorldJob(db.pool, world),
      await submitWorldJob(db.pool, world),
    ];
    for (const job of [first, third])
      await settle(db.pool, { jobId: job.id, event: { type: 'job.completed', usage: { input_tokens: 500, output_tokens: 0 } } });
    expect(await available(world)).toBe(90_000n);
    const t = await threshold(world, 86_000n);
    expect(t.armed).toBe(true);

    const correction = { type: 'job.usage_corrected' as const, correction: 1, usage: { input_tokens: 1000, output_tokens: 1000 } };
    const claims = await Promise.all(
      [first, released, third].map((job) => insertClaimedEvent(db.pool, job, { type: 'job.usage_corrected' })),
    );
    await settleBatch(db.pool, [
      { jobId: first.id, event: correction, claim: claims[0]! }, // 90000 → 83000: below
      { jobId: released.id, event: { type: 'job.failed' }, claim: claims[1]! }, // → 91000: re-armed
      { jobId: third.id, event: correction, claim: claims[2]! }, // → 84000: below again
    ]);
    expect(await available(world)).toBe(84_000n);
    expect(await balanceLow(world)).toEqual([
      { wallet_id: world.wallet.id, currency: 'USD', threshold: micros(86_000n), available: micros(83_000n) },
      { wallet_id: world.wallet.id, currency: 'USD', threshold: micros(86_000n), available: micros(84_000n) },
    ]);
    expect(await armed(t.id)).toBe(false);
  });

  it('one entry crossing several thresholds announces each, the higher first; a credit re-arms them all', async () => {
    const world = await createWorld(db.pool, { funds: 20_000n });
    await listen(world);
    const [high, low, below] = [await threshold(world, 15_000n), await threshold(world, 13_000n), await threshold(world, 1_000n)];
    await submitWorldJob(db.pool, world); // 20000 → 12000
    expect((await balanceLow(world)).map((m) => m.threshold)).toEqual([micros(15_000n), micros(13_000n)]);
    expect([await armed(high.id), await armed(low.id), await armed(below.id)]).toEqual([false, false, true]);
    await creditWallet(db.pool, world.wallet, 10_000n); // 12000 → 22000
    expect([await armed(high.id), await armed(low.id)]).toEqual([true, true]);
    expect(await balanceLow(world)).toHaveLength(2);
  });

  it('is created disarmed below available, and a deleted threshold is no longer evaluated', async () => {
    const world = await createWorld(db.pool, { funds: 20_000n });
    await listen(world);
    const above = await threshold(world, 50_000n);
    expect(above.armed).toBe(false);
    const deleted = await threshold(world, 1_000n);
    expect(deleted.armed).toBe(true);
    expect(await withTransaction(db.pool, (tx) => deleteThreshold(tx, world.wallet.id, deleted.id))).toMatchObject({ id: deleted.id });
    expect(await withTransaction(db.pool, (tx) => deleteThreshold(tx, world.wallet.id, deleted.id))).toBeNull();
    expect(((await walletRow(db.pool, world.wallet.id)) as unknown as { threshold_count: number }).threshold_count).toBe(1);
    await submitWorldJob(db.pool, world); // 20000 → 12000
    await submitWorldJob(db.pool, world); // → 4000
    expect(await balanceLow(world)).toEqual([]);
  });

  it('a threshold committed while a movement waits for the wallet lock is evaluated by that movement', async () => {
    const world = await createWorld(db.pool, { funds: 10_000n });
    await listen(world);
    // Hold the wallet's lock; the reservation's statement takes its snapshot, then waits.
    const gate = await gatePool.connect();
    await gate.query('begin');
    await gate.query(`select 1 from accounts where id = $1 for no key update`, [world.wallet.id]);
    const reservation = submitWorldJob(db.pool, world); // 10000 → 2000
    const deadline = Date.now() + 20_000;
    while ((await lockWaiters(db.pool)) < 1) {
      if (Date.now() > deadline) throw new Error('the reservation never waited for the wallet lock');
      await new Promise((resolve) => setImmediate(resolve));
    }
    // Created (armed: 10000 ≥ 5000) and committed while the reservation waits.
    const created = await insertThreshold(gate, world.wallet.id, world.tenantId, 5_000n);
    await gate.query('commit');
    gate.release();
    await reservation;
    expect(created).toMatchObject({ created: { armed: true } });
    expect(await balanceLow(world)).toEqual([
      { wallet_id: world.wallet.id, currency: 'USD', threshold: micros(5_000n), available: micros(2_000n) },
    ]);
  });
});
