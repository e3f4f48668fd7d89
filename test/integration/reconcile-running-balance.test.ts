import { describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/transaction.js';
import { newId } from '../../src/ids.js';
import { reconcile, resolveException } from '../../src/reconcile/run.js';
import {
  createWorld,
  databasePerTest,
  deliver,
  drain,
  event,
  expectClean,
  expectFoundTwice,
  expectNoRepair,
  expectResolvedMakesClean,
  submitJob,
} from '../support/reconcile-world.js';

/**
 * Reconciliation class `running_balance_drift` (docs/CONTRACT.md, "Wallets in time"):
 * each entry's running values, recomputed from the entries along the wallet's order,
 * and the order's head on the wallet's row. What no correct run produces is forged
 * here — an entry inserted with running values of its own (the trigger places only
 * entries that bring none), a head moved by hand — and each is found, found again as
 * the same exception, left alone by a repair run and made clean by a resolution.
 */
const scratch = databasePerTest();
const db = () => scratch.current.pool;
const resolve = (id: string, note: string) => resolveException(db(), id, note);

async function settledWallet() {
  const world = await createWorld(db(), { funds: 100_000n });
  const job = await submitJob(db(), world);
  await deliver(db(), world, event(world, job, 'job.completed', { usage: { input_tokens: 300, output_tokens: 200 } }));
  expect((await drain(db())).map((o) => o.kind)).toEqual(['settled']);
  expectClean(await reconcile(db()));
  const head = await db().query<{ entry_seq: bigint; running_balance: bigint; funding: string }>(
    `select w.entry_seq, w.running_balance, f.id as funding from accounts w join accounts f on f.tenant_id = w.tenant_id and f.kind = 'funding' where w.id = $1`,
    [world.wallet.id],
  );
  return { world, head: head.rows[0]! };
}

describe('running_balance_drift', () => {
  it("an entry whose stored balance is not the sum of the wallet's entries up to it", async () => {
    const { world, head } = await settledWallet();
    const seq = head.entry_seq + 1n;
    await withTransaction(db(), async (tx) => {
      // A credit of 700 that says the balance after it rose by 701; head and projection moved by 700.
      await tx.query(
        `insert into ledger_entries (id, settlement_key, entry_type, flags, debit_account_id, credit_account_id, amount, currency, tenant_id,
                                     wallet_id, wallet_seq, balance_after, reserved_after, created_at)
         values ($1, $2, 'credit', 'posted', $3, $4, 700, 'USD', $5, $4, $6, $7, 0, clock_timestamp())`,
        [newId(), `${world.tenantId}:forged:running`, head.funding, world.wallet.id, world.tenantId, seq, (head.running_balance + 701n).toString()],
      );
      await tx.query(
        `update accounts set credits_posted = credits_posted + 700, entry_seq = $2, running_balance = running_balance + 701,
                last_entry_at = (select created_at from ledger_entries where wallet_id = $1 and wallet_seq = $2) where id = $1`,
        [world.wallet.id, seq],
      );
      await tx.query('update accounts set debits_posted = debits_posted + 700 where id = $1', [head.funding]);
    });

    const [found] = await expectFoundTwice(db(), 'running_balance_drift');
    expect(found!.objects).toEqual({ wallet_id: world.wallet.id, tenant_id: world.tenantId });
    expect(found!.detail).toMatchObject({ first_broken_sequence: Number(seq), broken_entries: 1, unchained_entries: 0 });
    await expectNoRepair(db(), [found!]);
    await expectResolvedMakesClean(db(), [found!], resolve);
  });

  it("a head that is not the wallet's last entry", async () => {
    const { world, head } = await settledWallet();
    await db().query('update accounts set running_balance = running_balance - 5 where id = $1', [world.wallet.id]);

    const [found] = await expectFoundTwice(db(), 'running_balance_drift');
    expect(found!.detail).toMatchObject({
      first_broken_sequence: null,
      broken_entries: 0,
      head: { sequence: Number(head.entry_seq), balance: ((Number(head.running_balance) - 5) / 1e6).toFixed(6) },
      last_entry: { sequence: Number(head.entry_seq), balance: (Number(head.running_balance) / 1e6).toFixed(6) },
    });
    await expectNoRepair(db(), [found!]);
    await expectResolvedMakesClean(db(), [found!], resolve);
  });

  it('a gap in the order: a number skipped', async () => {
    const { world, head } = await settledWallet();
    // Placed by hand at number n + 2, with values that are otherwise right.
    await withTransaction(db(), async (tx) => {
      await tx.query(
        `insert into ledger_entries (id, settlement_key, entry_type, flags, debit_account_id, credit_account_id, amount, currency, tenant_id,
                                     wallet_id, wallet_seq, balance_after, reserved_after, created_at)
         values ($1, $2, 'credit', 'posted', $3, $4, 10, 'USD', $5, $4, $6, $7, 0, clock_timestamp())`,
        [newId(), `${world.tenantId}:forged:gap`, head.funding, world.wallet.id, world.tenantId, head.entry_seq + 2n, (head.running_balance + 10n).toString()],
      );
      await tx.query(
        `update accounts set credits_posted = credits_posted + 10, entry_seq = entry_seq + 2, running_balance = running_balance + 10,
                last_entry_at = (select max(created_at) from ledger_entries where wallet_id = $1) where id = $1`,
        [world.wallet.id],
      );
      await tx.query('update accounts set debits_posted = debits_posted + 10 where id = $1', [head.funding]);
    });
    const [found] = await expectFoundTwice(db(), 'running_balance_drift');
    expect(found!.detail).toMatchObject({ first_broken_sequence: Number(head.entry_seq + 2n), broken_entries: 1 });
  });
});
