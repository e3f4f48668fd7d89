import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../src/db/pool.js';
import { withTransaction } from '../../src/db/transaction.js';
import { runDueDuties } from '../../src/duties/duties.js';
import { activateDueGrants, expireDueGrants } from '../../src/duties/grant-duties.js';
import { newId } from '../../src/ids.js';
import type { AccountRow } from '../../src/funds/accounts.js';
import { createGrant, voidGrant, type GrantRequest } from '../../src/funds/grant-writes.js';
import { markCanceled } from '../../src/funds/grants.js';
import { Worker } from '../../src/worker/worker.js';
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
import { waitUntil } from '../support/server.js';

/**
 * The grants' periodic duties (src/duties/grant-duties.ts) on the real database: an
 * expired grant's unheld remaining leaves once however many sweepers run at once, each on
 * its own connections; a scheduled grant activates once; a real worker does both within
 * 10 s of the instant; the activation leaves alone what is not its to activate. The
 * ledger invariants are checked after every test.
 */
const db = await freshDatabase({ max: 20 });
afterEach(() => assertLedgerInvariants(db.pool));

let model: string;
let provider: ProviderFixture;
beforeAll(async () => {
  model = uniqueName('model');
  await publishPriceVersion(db.pool, model, 'USD', { ...UNIT_PRICES });
  provider = await ensureProvider(db.pool);
  // Scheduled reconciliation is not what these tests look at: the runners find it done.
  await db.pool.query(`insert into duties (name, last_run_at) values ('reconcile', now() + interval '1 day')
                       on conflict (name) do update set last_run_at = excluded.last_run_at`);
});

const silent = { info: () => {}, warn: () => {}, error: () => {} };

async function newWallet(): Promise<AccountRow> {
  return insertWallet(db.pool, await createTenant(db.pool));
}

function grant(wallet: AccountRow, amount: bigint, terms: Partial<GrantRequest> = {}) {
  return withTransaction(db.pool, (tx) =>
    createGrant(tx, { wallet, amount, category: 'promotional', priority: 50, grantKey: `${wallet.tenant_id}:grant:${newId()}`, ...terms }),
  );
}

/** Its expiry a moment ago by the database's clock (a grant cannot be created already expired). */
async function expireNow(grantId: string): Promise<void> {
  await db.pool.query(`update grants set expires_at = clock_timestamp() - interval '1 millisecond' where id = $1`, [grantId]);
}

/** A job reserving `micros` (input tokens at 2 micros each). */
function reserve(wallet: AccountRow, micros: bigint) {
  return submitJob(db.pool, { tenantId: wallet.tenant_id, wallet, provider, model, limits: { input_tokens: Number(micros / 2n) } });
}

/** A wallet whose two expired grants lapse 3,000 (2,000 of its 5,000 held by a job) and 1,000; its credit stays. */
async function walletWithExpiredGrants(): Promise<{ wallet: AccountRow; held: string; free: string }> {
  const wallet = await newWallet();
  const held = (await grant(wallet, 5_000n, { priority: 10 })).grant.id;
  const free = (await grant(wallet, 1_000n, { priority: 90 })).grant.id;
  await creditWallet(db.pool, wallet, 4_000n);
  await reserve(wallet, 2_000n); // all of it on the priority-10 grant
  await expireNow(held);
  await expireNow(free);
  return { wallet, held, free };
}

async function expiries(grantIds: string[]) {
  const result = await db.pool.query<{ grant_id: string; entries: number; amount: bigint | null; expired_amount: bigint; posted: boolean }>(
    `select g.id as grant_id, count(e.id)::int as entries, sum(e.amount)::bigint as amount, g.expired_amount, g.expiry_posted_at is not null as posted
     from grants g left join ledger_entries e on e.grant_id = g.id and e.entry_type = 'grant_expiry'
     where g.id = any($1) group by g.id, g.tenant_id order by g.id`,
    [grantIds],
  );
  return result.rows;
}

/** `n` pools of their own: separate connections, as separate worker processes have. */
async function pools<T>(n: number, run: (pool: Pool, i: number) => Promise<T>): Promise<T[]> {
  const opened = Array.from({ length: n }, () => createPool(db.url, { max: 3 }));
  try {
    return await Promise.all(opened.map((pool, i) => run(pool, i)));
  } finally {
    await Promise.all(opened.map((pool) => pool.end()));
  }
}

describe('grant_expiry', () => {
  it('six sweepers at once on their own connections post each expiry once, with the unheld remaining', async () => {
    const wallets = await Promise.all(Array.from({ length: 5 }, () => walletWithExpiredGrants()));
    const lapsed = new Map<string, bigint[]>();
    const results = await pools(6, (pool) =>
      expireDueGrants(pool, { onExpired: (g, amount) => lapsed.set(g.id, [...(lapsed.get(g.id) ?? []), amount]) }),
    );
    const ids = wallets.flatMap((w) => [w.held, w.free]);
    // Every grant moved by exactly one sweeper; the others found it done (or never reached it).
    expect(results.reduce((n, r) => n + r.moved, 0)).toBe(ids.length);
    expect(results.every((r) => r.failed === 0 && r.complete)).toBe(true);
    for (const w of wallets) {
      expect(lapsed.get(w.held)).toEqual([3_000n]);
      expect(lapsed.get(w.free)).toEqual([1_000n]);
    }
    const rows = await expiries(ids);
    expect(rows.every((r) => r.entries === 1 && r.posted && r.amount === r.expired_amount)).toBe(true);
    // The credit and the held 2,000 stay in each wallet.
    const balances = await db.pool.query<{ balance: bigint; reserved: bigint }>(
      'select credits_posted - debits_posted as balance, debits_pending as reserved from accounts where id = any($1)',
      [wallets.map((w) => w.wallet.id)],
    );
    expect(balances.rows.every((b) => b.balance === 6_000n && b.reserved === 2_000n)).toBe(true);

    // Nothing is due any more: another sweep moves nothing.
    expect(await expireDueGrants(db.pool)).toEqual({ moved: 0, skipped: 0, failed: 0, complete: true });
  });

  it('four workers running their duties at once: one of them takes the sweep this interval, and it expires everything due', async () => {
    const { held, free } = await walletWithExpiredGrants();
    await db.pool.query(`update duties set last_run_at = now() - interval '1 hour' where name like 'grant_%'`);
    const swept: number[] = [];
    await pools(4, (pool, i) =>
      runDueDuties(pool, {
        ...silent,
        info: (fields: object, message?: string) => {
          if (message === 'grant expired') swept.push(i);
        },
      }),
    );
    expect(swept).toHaveLength(2);
    expect(new Set(swept).size).toBe(1);
    expect((await expiries([held, free])).map((r) => [r.entries, r.expired_amount])).toEqual(
      [held, free].sort().map((id) => [1, id === held ? 3_000n : 1_000n]),
    );
  });

  it('a sweep out of time stops between grants and says so; the next one takes the rest', async () => {
    const { held, free } = await walletWithExpiredGrants();
    const first = await expireDueGrants(db.pool, { budgetMs: 0 });
    expect(first).toMatchObject({ moved: 0, complete: false });
    const second = await expireDueGrants(db.pool);
    expect(second).toMatchObject({ moved: 2, complete: true });
    expect((await expiries([held, free])).every((r) => r.entries === 1)).toBe(true);
  });
});

describe('grant_activation', () => {
  it('activates due scheduled grants once under concurrent sweepers, and leaves payments, voided, canceled and future grants alone', async () => {
    const wallet = await newWallet();
    const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled = await Promise.all([grant(wallet, 700n, { effectiveAt: inAnHour }), grant(wallet, 300n, { effectiveAt: inAnHour })]);
    const future = await grant(wallet, 50n, { effectiveAt: inAnHour });
    const voided = await grant(wallet, 60n, { effectiveAt: inAnHour });
    await withTransaction(db.pool, (tx) => voidGrant(tx, voided.grant.id, 'issued by mistake'));
    const checkout = await grant(wallet, 80n, { source: 'stripe_checkout', awaitingPayment: true, category: 'paid' });
    const canceled = await grant(wallet, 90n, { effectiveAt: inAnHour });
    await withTransaction(db.pool, (tx) => markCanceled(tx, canceled.grant.id));
    // Their instant has come (moved back by hand: a grant cannot be created effective in the past and still scheduled).
    await db.pool.query(`update grants set effective_at = clock_timestamp() - interval '1 second' where id = any($1)`, [
      [...scheduled.map((s) => s.grant.id), voided.grant.id, canceled.grant.id],
    ]);

    const results = await pools(4, (pool) => activateDueGrants(pool));
    expect(results.reduce((n, r) => n + r.moved, 0)).toBe(2);
    const grants = await db.pool.query<{ id: string; remaining: bigint; activated: boolean }>(
      'select id, remaining, activated_at is not null as activated from grants where wallet_id = $1',
      [wallet.id],
    );
    const state = new Map(grants.rows.map((g) => [g.id, [g.activated, g.remaining]]));
    expect(state.get(scheduled[0].grant.id)).toEqual([true, 700n]);
    expect(state.get(scheduled[1].grant.id)).toEqual([true, 300n]);
    for (const untouched of [future, voided, checkout, canceled]) expect(state.get(untouched.grant.id)).toEqual([false, 0n]);
    const entries = await db.pool.query(`select 1 from ledger_entries where grant_id = any($1) and entry_type = 'grant'`, [
      scheduled.map((s) => s.grant.id),
    ]);
    expect(entries.rowCount).toBe(2);
    expect(await activateDueGrants(db.pool)).toMatchObject({ moved: 0 });
  });
});

describe('a running worker', () => {
  it('activates a scheduled grant and expires a grant within 10 s of their instants', async () => {
    await db.pool.query(`update duties set last_run_at = now() - interval '1 hour' where name like 'grant_%'`);
    const wallet = await newWallet();
    const soon = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
    const scheduled = (await grant(wallet, 2_000n, { effectiveAt: soon(1) })).grant.id;
    const expiring = (await grant(wallet, 1_500n, { expiresAt: soon(2) })).grant.id;
    const pool = createPool(db.url, { max: 4 });
    const worker = new Worker(pool, {
      concurrency: 1,
      leaseSeconds: 30,
      pollIntervalMs: 500,
      dutyIntervalMs: 1000,
      duties: runDueDuties,
      databaseUrl: db.url,
      log: silent,
    });
    await worker.start();
    try {
      const lateness = async () =>
        (
          await db.pool.query<{ activated_after: number | null; expired_after: number | null }>(
            `select extract(epoch from (select activated_at - effective_at from grants where id = $1))::float8 as activated_after,
                    extract(epoch from (select expiry_posted_at - expires_at from grants where id = $2))::float8 as expired_after`,
            [scheduled, expiring],
          )
        ).rows[0]!;
      await waitUntil(async () => (await lateness()).expired_after !== null && (await lateness()).activated_after !== null, 15_000, 100);
      const { activated_after, expired_after } = await lateness();
      expect(activated_after).toBeGreaterThanOrEqual(0);
      expect(activated_after).toBeLessThan(10);
      expect(expired_after).toBeGreaterThanOrEqual(0);
      expect(expired_after).toBeLessThan(10);
    } finally {
      await worker.stop();
      await pool.end();
    }
    const grants = await db.pool.query<{ id: string; remaining: bigint; expired_amount: bigint }>(
      'select id, remaining, expired_amount from grants where id = any($1)',
      [[scheduled, expiring]],
    );
    expect(new Map(grants.rows.map((g) => [g.id, [g.remaining, g.expired_amount]]))).toEqual(
      new Map([
        [scheduled, [2_000n, 0n]],
        [expiring, [0n, 1_500n]],
      ]),
    );
  });
});
