import { describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/transaction.js';
import { newId } from '../../src/ids.js';
import type { AccountRow } from '../../src/funds/accounts.js';
import { createGrant, type GrantRequest } from '../../src/funds/grant-writes.js';
import { freshDatabase } from '../support/database.js';
import {
  UNIT_PRICES,
  createTenant,
  ensureProvider,
  insertWallet,
  publishPriceVersion,
  submitJob,
  uniqueName,
} from '../support/fixtures.js';
import { assertLedgerInvariants } from '../support/invariants.js';
import { runTally } from '../support/server.js';

/**
 * `./bin/tally grants expire` as a real child process (the built CLI) against this file's
 * database: --dry-run lists what would expire in the next hours with what would lapse and
 * the totals per currency, writing nothing; without it, what is due now expires, each
 * grant once however often the command runs. The tests run in order on one database.
 */
const db = await freshDatabase({ max: 6 });

async function tally(...args: string[]): Promise<{ code: number | string; stdout: string; output: string }> {
  const proc = runTally(args, { DATABASE_URL: db.url });
  let stdout = '';
  proc.child.stdout!.on('data', (chunk) => (stdout += chunk));
  const code = await proc.exited;
  return { code, stdout, output: proc.output() };
}

async function tallyJson(...args: string[]): Promise<any> {
  const run = await tally(...args, '--json');
  expect(run.code, run.output).toBe(0);
  return JSON.parse(run.stdout);
}

async function wallet(currency = 'USD'): Promise<AccountRow> {
  return insertWallet(db.pool, await createTenant(db.pool), currency);
}

function grant(to: AccountRow, amount: bigint, terms: Partial<GrantRequest> = {}) {
  return withTransaction(db.pool, (tx) =>
    createGrant(tx, { wallet: to, amount, category: 'promotional', priority: 50, grantKey: `${to.tenant_id}:grant:${newId()}`, ...terms }),
  );
}

const inHours = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString();

async function expiryEntries(): Promise<number> {
  return (await db.pool.query(`select 1 from ledger_entries where entry_type = 'grant_expiry'`)).rowCount ?? 0;
}

// USD: one grant due an hour ago (expiry not posted), one in 2 h with 2,000 of its 5,000 held
// by a job, one in 30 h; EUR: one in 1 h. And a grant without expiry, which never shows.
const usd = await wallet();
const eur = await wallet('EUR');
const inTwo = (await grant(usd, 5_000n, { expiresAt: inHours(2), priority: 10 })).grant.id;
const inThirty = (await grant(usd, 1_000n, { expiresAt: inHours(30) })).grant.id;
const overdue = (await grant(usd, 700n, { expiresAt: inHours(1) })).grant.id;
await db.pool.query(
  `update grants set effective_at = clock_timestamp() - interval '2 hours', expires_at = clock_timestamp() - interval '1 hour' where id = $1`,
  [overdue],
);
const euros = (await grant(eur, 300n, { expiresAt: inHours(1) })).grant.id;
await grant(usd, 9_000n, { priority: 90 });
const model = uniqueName('model');
await publishPriceVersion(db.pool, model, 'USD', { ...UNIT_PRICES });
const provider = await ensureProvider(db.pool);
await submitJob(db.pool, { tenantId: usd.tenant_id, wallet: usd, provider, model, limits: { input_tokens: 1_000 } }); // 2,000 on inTwo

describe('tally grants expire --dry-run', () => {
  it('lists the next 24 hours soonest first, with the unheld amount that would lapse and the total per currency, and writes nothing', async () => {
    const answer = await tallyJson('grants', 'expire', '--dry-run');
    expect(answer).toMatchObject({ dry_run: true, hours: 24, totals: { USD: '0.003700', EUR: '0.000300' } });
    expect(answer.grants).toEqual([
      expect.objectContaining({ grant_id: overdue, wallet_id: usd.id, tenant_id: usd.tenant_id, currency: 'USD', lapsing: '0.000700' }),
      expect.objectContaining({ grant_id: euros, wallet_id: eur.id, currency: 'EUR', lapsing: '0.000300' }),
      expect.objectContaining({ grant_id: inTwo, remaining: '0.005000', held: '0.002000', lapsing: '0.003000' }),
    ]);
    expect(Date.parse(answer.until) - Date.now()).toBeGreaterThan(23 * 3_600_000);

    const wider = await tallyJson('grants', 'expire', '--dry-run', '--hours', '48');
    expect(wider.grants.map((g: { grant_id: string }) => g.grant_id)).toEqual([overdue, euros, inTwo, inThirty]);
    expect(wider.totals).toEqual({ USD: '0.004700', EUR: '0.000300' });

    const text = await tally('grants', 'expire', '--dry-run');
    expect(text.code, text.output).toBe(0);
    expect(text.stdout).toContain(`${inTwo}  wallet ${usd.id}  tenant ${usd.tenant_id}`);
    expect(text.stdout).toContain('lapses 0.003000 USD (0.002000 held for jobs stays with them)');
    expect(text.stdout).toContain('would lapse: 0.003700 USD, 0.000300 EUR');
    expect(text.stdout).not.toContain(inThirty);
    expect(await expiryEntries()).toBe(0);
  });

  it('refuses an --hours that is not a whole number', async () => {
    const run = await tally('grants', 'expire', '--dry-run', '--hours', '1.5');
    expect(run.code).toBe(1);
    expect(run.output).toContain('--hours must be a non-negative whole number');
  });
});

describe('tally grants expire', () => {
  it('expires what is due now, once: prints what lapsed; a second run finds nothing', async () => {
    const text = await tally('grants', 'expire');
    expect(text.code, text.output).toBe(0);
    expect(text.stdout).toContain(`expired ${overdue}  wallet ${usd.id}  tenant ${usd.tenant_id}`);
    expect(text.stdout).toContain('lapsed 0.000700 USD');
    expect(text.stdout).toContain('1 grant(s) expired now; lapsed: 0.000700 USD');
    const again = await tallyJson('grants', 'expire');
    expect(again).toMatchObject({ dry_run: false, expired: [], totals: {}, failed: [] });
    expect(await expiryEntries()).toBe(1);

    // Due now as well: the --json answer names each grant and what lapsed.
    await db.pool.query(`update grants set expires_at = clock_timestamp() - interval '1 millisecond' where id = any($1)`, [[inTwo, euros]]);
    const json = await tallyJson('grants', 'expire');
    expect(json.expired).toHaveLength(2);
    expect(json.expired).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ grant_id: euros, currency: 'EUR', lapsed: '0.000300' }),
        expect.objectContaining({ grant_id: inTwo, wallet_id: usd.id, tenant_id: usd.tenant_id, currency: 'USD', lapsed: '0.003000' }),
      ]),
    );
    expect(json.totals).toEqual({ USD: '0.003000', EUR: '0.000300' });
    expect(await expiryEntries()).toBe(3);
    await assertLedgerInvariants(db.pool);
  });
});
