import { describe, expect, it } from 'vitest';
import { AppendOnlyViolation, CheckViolation, mapDatabaseError } from '../../src/db/errors.js';
import { migrate } from '../../src/db/migrate.js';
import { withTransaction } from '../../src/db/transaction.js';
import { newId } from '../../src/ids.js';
import { creditWallet } from '../../src/funds/credit.js';
import { findInconsistencies, projectionFromEntries } from '../../src/reconcile/checks.js';
import { fileDatabase, migrateBefore } from '../support/older-schema.js';

/**
 * Migration 0009 on a database that already holds a ledger: every existing entry of a
 * wallet takes its place in the wallet's order by (created_at, id) with the running
 * values of that order, the wallet's head is its last entry, the table is append-only
 * again afterwards, and new entries — through Tally's path or written by hand —
 * continue each order.
 */

const RUNNING_BALANCES = 9;
const WALLETS = 3;
const CREDITS = 4000; // per wallet
const JOBS = 3000; // per wallet: a reservation, a capture and the remainder's release each

const pool = await fileDatabase('tally_backfill');

interface Wallet {
  id: string;
  tenantId: string;
}

/** A populated ledger, written set-based: credits (instants in pairs, so some tie), then jobs' holds, captures and remainders. */
async function populate(): Promise<Wallet[]> {
  const wallets: Wallet[] = [];
  for (let w = 0; w < WALLETS; w++) {
    const tenantId = newId();
    const [wallet, funding, revenue] = [newId(), newId(), newId()];
    await withTransaction(pool, async (tx) => {
      await tx.query('insert into tenants (id, name) values ($1, $2)', [tenantId, `t${w}`]);
      await tx.query(`insert into accounts (id, tenant_id, currency, kind) values ($1, $4, 'USD', 'wallet'), ($2, $4, 'USD', 'funding'), ($3, $4, 'USD', 'revenue')`, [
        wallet,
        funding,
        revenue,
        tenantId,
      ]);
      await tx.query(
        `insert into ledger_entries (id, settlement_key, entry_type, flags, debit_account_id, credit_account_id, amount, currency, tenant_id, created_at)
         select md5($1 || ':credit:' || g)::uuid, $1 || ':credit:' || g, 'credit', 'posted', $2::uuid, $3::uuid, 1000 + g, 'USD', $1::uuid,
                timestamptz '2026-11-01T00:00:00Z' + (g / 2) * interval '1 millisecond'
         from generate_series(1, $4::int) g`,
        [tenantId, funding, wallet, CREDITS],
      );
      await tx.query(
        `insert into ledger_entries (id, settlement_key, entry_type, flags, pending_id, debit_account_id, credit_account_id, amount, currency, tenant_id, job_id, created_at)
         select md5($1 || ':hold:' || g)::uuid, $1 || ':hold:' || g, 'reserve', 'pending', null::uuid, $2::uuid, $3::uuid, 500, 'USD', $1::uuid, md5($1 || ':job:' || g)::uuid,
                timestamptz '2026-11-02T00:00:00Z' + g * interval '3 millisecond'
         from generate_series(1, $4::int) g
         union all
         select md5($1 || ':capture:' || g)::uuid, $1 || ':' || g || ':capture:1', 'capture', 'post_pending', md5($1 || ':hold:' || g)::uuid, $2::uuid, $3::uuid, g % 400, 'USD',
                $1::uuid, md5($1 || ':job:' || g)::uuid, timestamptz '2026-11-02T00:00:00Z' + (g + 5) * interval '3 millisecond'
         from generate_series(1, $4::int) g where g % 400 > 0
         union all
         select md5($1 || ':remainder:' || g)::uuid, $1 || ':' || g || ':capture:1', 'release_remainder', 'void_pending', md5($1 || ':hold:' || g)::uuid, $2::uuid, $3::uuid,
                500 - g % 400, 'USD', $1::uuid, md5($1 || ':job:' || g)::uuid, timestamptz '2026-11-02T00:00:00Z' + (g + 5) * interval '3 millisecond'
         from generate_series(1, $4::int) g`,
        [tenantId, wallet, revenue, JOBS],
      );
      await tx.query(
        `update accounts a set debits_pending = s.debits_pending, debits_posted = s.debits_posted, credits_pending = s.credits_pending, credits_posted = s.credits_posted
         from (${projectionFromEntries()}) s where s.account_id = a.id and a.tenant_id = $1`,
        [tenantId],
      );
    });
    wallets.push({ id: wallet, tenantId });
  }
  return wallets;
}

/** The wallet's order recomputed here from the raw rows, by (created_at, id). */
async function expectedOrder(walletId: string) {
  const rows = await pool.query<{ id: string; flags: string; amount: bigint; debit: string; credit: string }>(
    `select id, flags, amount, debit_account_id as debit, credit_account_id as credit from ledger_entries
     where $1 in (debit_account_id, credit_account_id) order by created_at, id`,
    [walletId],
  );
  let [balance, reserved] = [0n, 0n];
  return rows.rows.map((r, i) => {
    if (r.flags === 'posted' || r.flags === 'post_pending') balance += r.credit === walletId ? r.amount : -r.amount;
    if (r.debit === walletId) reserved += r.flags === 'pending' ? r.amount : r.flags === 'posted' ? 0n : -r.amount;
    return { id: r.id, wallet_seq: BigInt(i + 1), balance_after: balance, reserved_after: reserved };
  });
}

describe('migration 0009 on a populated ledger', () => {
  it(`orders every existing entry of ${WALLETS} wallets (about ${WALLETS * (CREDITS + 3 * JOBS)}), and the orders continue`, { timeout: 120_000 }, async () => {
    await migrateBefore(pool, RUNNING_BALANCES);
    const wallets = await populate();
    const before = await pool.query<{ n: number }>('select count(*)::int as n from ledger_entries');

    const started = performance.now();
    const applied = await migrate(pool);
    const seconds = (performance.now() - started) / 1000;
    expect(applied[0]).toMatch(/^0009_/);
    console.log(`migration 0009 and later: ${before.rows[0]!.n} entries in ${seconds.toFixed(2)} s`);

    expect((await pool.query<{ n: number }>('select count(*)::int as n from ledger_entries')).rows[0]!.n).toBe(before.rows[0]!.n);
    for (const wallet of wallets) {
      const stored = await pool.query(`select id, wallet_seq, balance_after, reserved_after from ledger_entries where wallet_id = $1 order by wallet_seq`, [wallet.id]);
      const expected = await expectedOrder(wallet.id);
      expect(stored.rows).toEqual(expected);
      const head = await pool.query('select entry_seq, running_balance, running_reserved, credits_posted - debits_posted as balance, debits_pending as reserved from accounts where id = $1', [wallet.id]);
      const last = expected.at(-1)!;
      expect(head.rows[0]).toEqual({ entry_seq: last.wallet_seq, running_balance: last.balance_after, running_reserved: last.reserved_after, balance: last.balance_after, reserved: last.reserved_after });
    }
    expect(await findInconsistencies(pool)).toEqual([]);

    // Append-only again.
    const refused = await pool.query('update ledger_entries set amount = amount + 1 where wallet_id = $1', [wallets[0]!.id]).then(
      () => null,
      (e: unknown) => mapDatabaseError(e),
    );
    expect(refused).toBeInstanceOf(AppendOnlyViolation);

    // Tally's own path continues the order …
    const wallet = wallets[0]!;
    const last = (await expectedOrder(wallet.id)).at(-1)!;
    const { entry } = await withTransaction(pool, (tx) => creditWallet(tx, { wallet: { id: wallet.id, tenant_id: wallet.tenantId, currency: 'USD' }, amount: 7n, creditKey: 'after-upgrade' }));
    expect({ sequence: entry.sequence, balance: entry.balanceAfter, reserved: entry.reservedAfter }).toEqual({ sequence: last.wallet_seq + 1n, balance: last.balance_after + 7n, reserved: last.reserved_after });
    // An entry written by hand (as a release before 0009 wrote them) was placed by a trigger
    // until 0031; since then only the posting writer says what an entry does, and the
    // database refuses an entry of a wallet without its place. Nothing moves.
    const funding = await pool.query<{ id: string }>(`select id from accounts where tenant_id = $1 and kind = 'funding'`, [wallet.tenantId]);
    const headOf = async () => (await pool.query('select entry_seq, running_balance, last_entry_at from accounts where id = $1', [wallet.id])).rows[0];
    const headBefore = await headOf();
    const byHand = await pool
      .query(
        `insert into ledger_entries (id, settlement_key, entry_type, flags, debit_account_id, credit_account_id, amount, currency, tenant_id)
         values ($1, $2, 'credit', 'posted', $3, $4, 5, 'USD', $5)`,
        [newId(), `${wallet.tenantId}:by-hand`, funding.rows[0]!.id, wallet.id, wallet.tenantId],
      )
      .then(
        () => null,
        (e: unknown) => mapDatabaseError(e),
      );
    expect(byHand).toBeInstanceOf(CheckViolation);
    expect((byHand as CheckViolation).constraint).toBe('ledger_entries_wallet_order_placed');
    expect(await headOf()).toEqual(headBefore);
    expect(await findInconsistencies(pool)).toEqual([]);
  });
});
