import { describe, expect, it, inject } from 'vitest';
import { randomBytes } from 'node:crypto';
import { createPool } from '../../src/db/pool.js';
import { migrate, migrationsCurrent } from '../../src/db/migrate.js';
import { withTransaction } from '../../src/db/transaction.js';
import { AppendOnlyViolation, CheckViolation, UniqueViolation, mapDatabaseError } from '../../src/db/errors.js';
import { newId } from '../../src/ids.js';
import { freshDatabase } from '../support/database.js';
import { withDatabase } from '../support/global-setup.js';
import { forgeEntry, forgeEntryIn } from '../support/forge-entry.js';

const db = await freshDatabase();

async function expectDbError(promise: Promise<unknown>) {
  const error = await promise.then(
    () => null,
    (e: unknown) => mapDatabaseError(e),
  );
  expect(error, 'the statement should have been refused').not.toBeNull();
  return error as Error & { constraint?: string };
}

/** The minimum rows a hold and a settlement need, written with plain SQL. */
async function seedJob() {
  const tenant = newId();
  const [wallet, revenue, funding] = [newId(), newId(), newId()];
  const price = newId();
  const job = newId();
  await withTransaction(db.pool, async (tx) => {
    await tx.query('insert into tenants (id, name) values ($1, $2)', [tenant, 't']);
    await tx.query(
      `insert into accounts (id, tenant_id, currency, kind) values ($1, $4, 'USD', 'wallet'), ($2, $4, 'USD', 'revenue'), ($3, $4, 'USD', 'funding')`,
      [wallet, revenue, funding, tenant],
    );
    await tx.query(`insert into providers (name, kind, secrets) values ($1, 'generic', '{whsec_x}') on conflict do nothing`, ['p1']);
    await tx.query(
      `insert into price_versions (id, model, currency, version, unit_prices) values ($1, $2, 'USD', 1, '{"input_tokens":"1.000000"}')`,
      [price, `m-${randomBytes(4).toString('hex')}`],
    );
    await tx.query(
      `insert into jobs (id, tenant_id, wallet_id, provider, model, currency, price_version_id, limits, state, reserved, hold_expires_at)
       values ($1, $2, $3, 'p1', 'm', 'USD', $4, '{}', 'reserved', 100, now() + interval '1 day')`,
      [job, tenant, wallet, price],
    );
    await tx.query(
      `insert into holds (job_id, tenant_id, wallet_id, revenue_account_id, currency, amount, expires_at)
       values ($1, $2, $3, $4, 'USD', 100, now() + interval '1 day')`,
      [job, tenant, wallet, revenue],
    );
    await forgeEntryIn(tx, {
      settlementKey: `${tenant}:credit:k1`,
      entryType: 'credit',
      flags: 'posted',
      debitAccountId: funding,
      creditAccountId: wallet,
      amount: 500n,
      currency: 'USD',
      tenantId: tenant,
    });
  });
  return { tenant, wallet, revenue, funding, job };
}

describe('migrations', () => {
  it('apply on a fresh database, then report up to date', async () => {
    const admin = createPool(withDatabase(inject('databaseUrl'), 'postgres'), { max: 1 });
    const name = `tally_fresh_${randomBytes(5).toString('hex')}`;
    await admin.query(`create database ${name}`);
    const pool = createPool(withDatabase(inject('databaseUrl'), name), { max: 8 });
    try {
      expect(await migrationsCurrent(pool)).toBe(false);
      // Concurrent starts: every migration is applied exactly once, nobody fails.
      const runs = await Promise.all([migrate(pool), migrate(pool), migrate(pool)]);
      const appliedTotal = runs.flat();
      expect(new Set(appliedTotal).size).toBe(appliedTotal.length);
      expect(appliedTotal.length).toBeGreaterThan(0);
      expect(await migrationsCurrent(pool)).toBe(true);
      expect(await migrate(pool)).toEqual([]);
    } finally {
      await pool.end();
      await admin.query(`drop database ${name} with (force)`);
      await admin.end();
    }
  });
});

describe('append-only ledger', () => {
  it('refuses UPDATE, DELETE and TRUNCATE of ledger entries', async () => {
    await seedJob();
    const update = await expectDbError(db.pool.query('update ledger_entries set amount = amount + 1'));
    expect(update).toBeInstanceOf(AppendOnlyViolation);
    const remove = await expectDbError(db.pool.query('delete from ledger_entries'));
    expect(remove).toBeInstanceOf(AppendOnlyViolation);
    const truncate = await expectDbError(db.pool.query('truncate ledger_entries cascade'));
    expect(truncate).toBeInstanceOf(AppendOnlyViolation);
    const count = await db.pool.query('select count(*)::int as n from ledger_entries');
    expect(count.rows[0].n).toBeGreaterThan(0);
  });

  it('refuses a second entry of the same type under one settlement key, by constraint name', async () => {
    const s = await seedJob();
    const error = await expectDbError(
      forgeEntry(db.pool, {
        settlementKey: `${s.tenant}:credit:k1`,
        entryType: 'credit',
        flags: 'posted',
        debitAccountId: s.funding,
        creditAccountId: s.wallet,
        amount: 500n,
        currency: 'USD',
        tenantId: s.tenant,
      }),
    );
    expect(error).toBeInstanceOf(UniqueViolation);
    expect(error.constraint).toBe('ledger_entries_settlement_key_entry_type_grant_key');
  });
});

describe('entries of a wallet', () => {
  it('are refused without their place in the wallet order (migration 0031): only the posting writer says what they do', async () => {
    const s = await seedJob();
    const error = await expectDbError(
      db.pool.query(
        `insert into ledger_entries (id, settlement_key, entry_type, flags, debit_account_id, credit_account_id, amount, currency, tenant_id)
         values ($1, $2, 'credit', 'posted', $3, $4, 500, 'USD', $5)`,
        [newId(), `${s.tenant}:credit:unplaced`, s.funding, s.wallet, s.tenant],
      ),
    );
    expect(error).toBeInstanceOf(CheckViolation);
    expect(error.constraint).toBe('ledger_entries_wallet_order_placed');
    const kept = await db.pool.query('select count(*)::int as n from ledger_entries where settlement_key = $1', [`${s.tenant}:credit:unplaced`]);
    expect(kept.rows[0].n).toBe(0);
  });
});

describe('settlements', () => {
  it('a second settlement with an existing key fails on settlements_settlement_key_key', async () => {
    const s = await seedJob();
    const insert = () =>
      db.pool.query(
        `insert into settlements (id, settlement_key, tenant_id, job_id, charge_type, version, amount)
         values ($1, $2, $3, $4, 'capture', 1, 10)`,
        [newId(), `${s.tenant}:${s.job}:capture:1`, s.tenant, s.job],
      );
    await insert();
    const error = await expectDbError(insert());
    expect(error).toBeInstanceOf(UniqueViolation);
    expect(error.constraint).toBe('settlements_settlement_key_key');
    const updated = await expectDbError(db.pool.query('update settlements set amount = 0'));
    expect(updated).toBeInstanceOf(AppendOnlyViolation);
  });
});

describe('holds', () => {
  it('cannot be resolved twice, nor resolved inconsistently', async () => {
    const s = await seedJob();
    const inconsistent = await expectDbError(
      db.pool.query(`update holds set posted = 60, voided = 30, resolved_by = 'x', resolved_at = now() where job_id = $1`, [s.job]),
    );
    expect(inconsistent).toBeInstanceOf(CheckViolation);
    expect(inconsistent.constraint).toBe('holds_resolution_complete');

    await db.pool.query(`update holds set posted = 60, voided = 40, resolved_by = 'capture', resolved_at = now() where job_id = $1`, [s.job]);
    const second = await expectDbError(
      db.pool.query(`update holds set posted = 0, voided = 100, resolved_by = 'release', resolved_at = now() where job_id = $1`, [s.job]),
    );
    expect(second).toBeInstanceOf(CheckViolation);
    expect(second.constraint).toBe('holds_resolved_once');
    const row = await db.pool.query('select posted, voided, resolved_by from holds where job_id = $1', [s.job]);
    expect(row.rows[0]).toEqual({ posted: 60n, voided: 40n, resolved_by: 'capture' });
  });
});
