import { describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { withTransaction } from '../../src/db/transaction.js';
import { newId } from '../../src/ids.js';
import { findInconsistencies, projectionFromEntries } from '../../src/reconcile/checks.js';
import { fileDatabase, migrateBefore } from '../support/older-schema.js';

/**
 * Migration 0014 on a ledger that already has holds and settlements: the spend of every
 * tenant, currency and UTC period (day, month) is counted from them — the captures and
 * adjustments posted in each period plus the holds of jobs reserved in it still open —
 * and reconciliation (spend_period_drift) agrees with it; a counter that differs, or one
 * missing, is found.
 */

const SPEND_LIMITS = 14;
const JOBS = 240;
const HOLD = 5_000n;

const pool = await fileDatabase('tally_spend_backfill');

/** Job i: reserved at a time that walks over days and the October/November boundary; open, captured, released, or captured and adjusted. */
const START = Date.parse('2026-10-30T21:00:00.000Z');
const reservedAt = (i: number) => new Date(START + i * 97 * 60_000);
const settledAt = (i: number) => new Date(reservedAt(i).getTime() + 26 * 3_600_000);
const adjustedAt = (i: number) => new Date(reservedAt(i).getTime() + 53 * 3_600_000);
const kindOf = (i: number) => (['open', 'captured', 'released', 'adjusted'] as const)[i % 4]!;
const captureOf = (i: number) => BigInt((i * 37) % 5_000);
const adjustmentOf = (i: number) => BigInt(i % 3 === 0 ? -(i % 700) - 1 : (i % 900) + 1); // refunds and charges

/** What migration 0014 must count, worked out here from the data above. */
function expectedSpend(): Map<string, bigint> {
  const spend = new Map<string, bigint>();
  const add = (at: Date, amount: bigint) => {
    const iso = at.toISOString();
    for (const key of [`day:${iso.slice(0, 10)}`, `month:${iso.slice(0, 7)}-01`]) spend.set(key, (spend.get(key) ?? 0n) + amount);
  };
  for (let i = 0; i < JOBS; i++) {
    const kind = kindOf(i);
    if (kind === 'open') add(reservedAt(i), HOLD);
    if (kind === 'captured' || kind === 'adjusted') add(settledAt(i), captureOf(i));
    if (kind === 'adjusted') add(adjustedAt(i), adjustmentOf(i));
  }
  for (const [key, amount] of spend) if (amount === 0n) spend.delete(key);
  return spend;
}

async function populate(): Promise<{ tenantId: string }> {
  const tenantId = newId();
  const [wallet, funding, revenue, price] = [newId(), newId(), newId(), newId()];
  await withTransaction(pool, async (tx) => {
    await tx.query('insert into tenants (id, name) values ($1, $2)', [tenantId, 't']);
    await tx.query(
      `insert into accounts (id, tenant_id, currency, kind) values ($1, $4, 'USD', 'wallet'), ($2, $4, 'USD', 'funding'), ($3, $4, 'USD', 'revenue')`,
      [wallet, funding, revenue, tenantId],
    );
    await tx.query(`insert into providers (name, kind, secrets) values ('p', 'generic', '{whsec_eA==}')`);
    await tx.query(
      `insert into price_versions (id, model, currency, version, unit_prices) values ($1, 'm', 'USD', 1, '{"input_tokens":"1.000000"}')`,
      [price],
    );
    await tx.query(
      `insert into ledger_entries (id, settlement_key, entry_type, flags, debit_account_id, credit_account_id, amount, currency, tenant_id)
       values ($1, $2, 'credit', 'posted', $3, $4, 100000000, 'USD', $5)`,
      [newId(), `${tenantId}:credit:1`, funding, wallet, tenantId],
    );
    for (let i = 0; i < JOBS; i++) {
      const job = newId();
      const kind = kindOf(i);
      const [key, reserve] = [(charge: string, v = 1) => `${tenantId}:${job}:${charge}:${v}`, newId()];
      await tx.query(
        `insert into jobs (id, tenant_id, wallet_id, provider, model, currency, price_version_id, limits, state, reserved, captured, released, hold_expires_at, created_at)
         values ($1, $2, $3, 'p', 'm', 'USD', $4, '{}', $5, $6, $7, $8, $9::timestamptz + interval '1000 days', $9)`,
        [
          job,
          tenantId,
          wallet,
          price,
          kind === 'open' ? 'reserved' : kind === 'released' ? 'released' : 'captured',
          HOLD,
          kind === 'open' ? null : kind === 'released' ? 0 : captureOf(i),
          kind === 'open' ? null : kind === 'released' ? HOLD : HOLD - captureOf(i),
          reservedAt(i),
        ],
      );
      const entry = (
        settlementKey: string,
        type: string,
        flags: string,
        amount: bigint,
        debit: string,
        credit: string,
        pending: string | null = null,
      ) =>
        tx.query(
          `insert into ledger_entries (id, settlement_key, entry_type, flags, pending_id, debit_account_id, credit_account_id, amount, currency, tenant_id, job_id)
           values ($1, $2, $3, $4, $5, $6, $7, $8, 'USD', $9, $10)`,
          [type === 'reserve' ? reserve : newId(), settlementKey, type, flags, pending, debit, credit, amount, tenantId, job],
        );
      await entry(`${tenantId}:${job}:hold`, 'reserve', 'pending', HOLD, wallet, revenue);
      const resolved = kind === 'open' ? null : kind === 'released' ? key('release') : key('capture');
      const [posted, voided] = kind === 'open' ? [null, null] : kind === 'released' ? [0n, HOLD] : [captureOf(i), HOLD - captureOf(i)];
      await tx.query(
        `insert into holds (job_id, tenant_id, wallet_id, revenue_account_id, currency, amount, pending_entry_id, posted, voided, resolved_by, resolved_at, expires_at, created_at)
         values ($1, $2, $3, $4, 'USD', $5, $6, $7, $8, $9, $10, $11::timestamptz + interval '1000 days', $11)`,
        [job, tenantId, wallet, revenue, HOLD, reserve, posted, voided, resolved, resolved ? settledAt(i) : null, reservedAt(i)],
      );
      const settlement = (settlementKey: string, charge: string, amount: bigint, at: Date, version = 1, remainder = 0n) =>
        tx.query(
          `insert into settlements (id, settlement_key, tenant_id, job_id, charge_type, version, amount, remainder, created_at) values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
          [newId(), settlementKey, tenantId, job, charge, version, amount, remainder, at],
        );
      if (kind === 'released') {
        await settlement(key('release'), 'release', HOLD, settledAt(i));
        await entry(key('release'), 'release', 'void_pending', HOLD, wallet, revenue, reserve);
      }
      if (kind === 'captured' || kind === 'adjusted') {
        await settlement(key('capture'), 'capture', captureOf(i), settledAt(i), 1, HOLD - captureOf(i));
        if (captureOf(i) > 0n) await entry(key('capture'), 'capture', 'post_pending', captureOf(i), wallet, revenue, reserve);
        await entry(key('capture'), 'release_remainder', 'void_pending', HOLD - captureOf(i), wallet, revenue, reserve);
      }
      if (kind === 'adjusted') {
        const amount = adjustmentOf(i);
        await settlement(key('adjustment'), 'adjustment', amount, adjustedAt(i));
        await entry(
          key('adjustment'),
          'adjustment',
          'posted',
          amount > 0n ? amount : -amount,
          amount > 0n ? wallet : revenue,
          amount > 0n ? revenue : wallet,
        );
      }
    }
    await tx.query(
      `update accounts a set debits_pending = s.debits_pending, debits_posted = s.debits_posted, credits_pending = s.credits_pending, credits_posted = s.credits_posted
       from (${projectionFromEntries()}) s where s.account_id = a.id and a.tenant_id = $1`,
      [tenantId],
    );
  });
  return { tenantId };
}

describe('migration 0014 on a populated ledger', () => {
  it(`counts the spend of ${JOBS} jobs over days and months: reconciliation agrees, and finds a counter changed or missing`, async () => {
    await migrateBefore(pool, SPEND_LIMITS);
    const { tenantId } = await populate();
    const applied = await migrate(pool);
    expect(applied[0]).toMatch(/^0014_/);

    const counted = await pool.query<{ period: string; starts_on: string; spent: bigint }>(
      `select period, to_char(starts_on, 'YYYY-MM-DD') as starts_on, spent from spend_periods where tenant_id = $1`,
      [tenantId],
    );
    const stored = new Map(counted.rows.map((r) => [`${r.period}:${r.starts_on}`, r.spent]));
    const expected = expectedSpend();
    expect(stored).toEqual(expected);
    expect([...expected.keys()].filter((k) => k.startsWith('month:')).sort()).toEqual(['month:2026-10-01', 'month:2026-11-01']);
    expect(await findInconsistencies(pool)).toEqual([]);

    // A counter off by a micro, and one gone: each found, naming its period.
    await pool.query(`update spend_periods set spent = spent + 1 where tenant_id = $1 and period = 'month' and starts_on = '2026-10-01'`, [
      tenantId,
    ]);
    const gone = [...expected.keys()].find((k) => k.startsWith('day:'))!.slice('day:'.length);
    await pool.query(`delete from spend_periods where tenant_id = $1 and period = 'day' and starts_on = $2::date`, [tenantId, gone]);
    const found = await findInconsistencies(pool, ['spend_period_drift']);
    const amount = (micros: bigint) => (Number(micros) / 1e6).toFixed(6);
    expect(found.map((f) => [f.objects, f.detail]).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual(
      [
        [
          { tenant_id: tenantId, currency: 'USD', period: 'day', starts_on: gone },
          { counted: '0.000000', recomputed: amount(expected.get(`day:${gone}`)!) },
        ],
        [
          { tenant_id: tenantId, currency: 'USD', period: 'month', starts_on: '2026-10-01' },
          { counted: amount(expected.get('month:2026-10-01')! + 1n), recomputed: amount(expected.get('month:2026-10-01')!) },
        ],
      ].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    );
  });
});
