import { describe, expect, it } from 'vitest';
import { simulate } from '../../src/simulator/index.js';
import { freshDatabase } from '../support/database.js';
import { Fleet } from '../support/fleet.js';
import { runTally } from '../support/server.js';
import { cancelJob, chaosSeed, createChaosWorld, expectCleanReconciliation, expectExactlyOnce, formatMicros, micros, plannedJobs, printSummary, waitForSettled } from '../support/chaos-world.js';

/**
 * The projection (the four columns on accounts) made to disagree with the immutable
 * entries on purpose, by SQL behind the ledger's back: `tally reconcile` must find it
 * (projection_drift per account, currency_sum_nonzero since the books no longer
 * balance) and `tally reconcile --repair` must rebuild it from the entries.
 */
const JOBS = 14;
const SEED = chaosSeed();
const db = await freshDatabase();
const fleet = new Fleet(db.url);
const api = await fleet.server({ name: 'api', workers: 1 });

interface Run {
  id: string;
  clean: boolean;
  exceptions: { id: string; class: string; objects: Record<string, unknown> }[];
  repairs: { class: string; action: string; result: string }[];
}

/** `./bin/tally reconcile --json [--repair]` as an operator runs it: its exit code and its run. */
async function reconcileCli(...flags: string[]): Promise<{ exit: number | string; run: Run }> {
  const proc = runTally(['reconcile', '--json', ...flags], { DATABASE_URL: db.url });
  const exit = await proc.exited;
  const output = proc.output();
  return { exit, run: JSON.parse(output.slice(output.indexOf('{'))) as Run };
}

async function accountsSnapshot() {
  const result = await db.pool.query(
    `select id, kind, debits_pending::text, debits_posted::text, credits_pending::text, credits_posted::text from accounts order by id`,
  );
  return result.rows;
}

describe('a projection drifted on purpose', () => {
  it(`is found by reconciliation and repaired by reconcile --repair (seed ${SEED})`, { timeout: 120_000 }, async () => {
    const world = await createChaosWorld(api.url, { tenants: 2 });
    const planned = await plannedJobs(world, JOBS, SEED);
    const report = await simulate(planned, { baseUrl: api.url, provider: world.provider, secret: world.secret, seed: SEED, concurrency: 8, cancelJob: cancelJob(world) });
    expect(report.unexpected).toEqual([]);
    await waitForSettled(db.pool, planned.map((j) => j.id));
    await expectExactlyOnce(db.pool, world, planned);
    const sound = await accountsSnapshot();
    const [first, second] = world.tenants as [(typeof world.tenants)[0], (typeof world.tenants)[0]];
    const balanceBefore = (await first.client.get(`/v1/wallets/${first.walletId}`)).body.balance as string;

    // A wallet credited from nowhere, and a revenue account showing a pending debit no entry made.
    const revenue = await db.pool.query<{ id: string }>(`select id from accounts where tenant_id = $1 and kind = 'revenue'`, [second.id]);
    const revenueId = revenue.rows[0]!.id;
    await db.pool.query('update accounts set credits_posted = credits_posted + 1234567 where id = $1', [first.walletId]);
    await db.pool.query('update accounts set debits_pending = debits_pending + 500 where id = $1', [revenueId]);
    // The API reads the projection: the drift is visible to the tenant.
    expect((await first.client.get(`/v1/wallets/${first.walletId}`)).body.balance).toBe(formatMicros(micros(balanceBefore) + 1_234_567n));

    const found = await reconcileCli();
    expect(found.exit).toBe(1);
    expect(found.run.clean).toBe(false);
    const summary = (run: Run) =>
      run.exceptions
        .map((e) => `${e.class} ${(e.objects.account_id as string | undefined) ?? (e.objects.currency as string)}`)
        .sort();
    expect(summary(found.run)).toEqual([`currency_sum_nonzero USD`, `projection_drift ${first.walletId}`, `projection_drift ${revenueId}`].sort());
    // Found again, it is the same exception, not a new one.
    const again = await reconcileCli();
    expect(again.exit).toBe(1);
    expect(again.run.exceptions.map((e) => e.id).sort()).toEqual(found.run.exceptions.map((e) => e.id).sort());

    const repaired = await reconcileCli('--repair');
    expect(repaired.exit).toBe(0);
    expect(repaired.run.clean).toBe(true);
    expect(repaired.run.exceptions).toEqual([]);
    expect(repaired.run.repairs.map((r) => `${r.class} ${r.action}`).sort()).toEqual(['projection_drift rebuild_projection', 'projection_drift rebuild_projection']);

    expect(await accountsSnapshot()).toEqual(sound);
    expect((await first.client.get(`/v1/wallets/${first.walletId}`)).body.balance).toBe(balanceBefore);
    // A repair run changes nothing the second time.
    const idle = await reconcileCli('--repair');
    expect({ exit: idle.exit, clean: idle.run.clean, repairs: idle.run.repairs }).toEqual({ exit: 0, clean: true, repairs: [] });
    await expectCleanReconciliation(db.pool);
    expect(fleet.crashes).toEqual([]);
    const billing = await expectExactlyOnce(db.pool, world, planned);

    printSummary(`drift (seed ${SEED})`, {
      jobs: JOBS,
      deliveries: report.deliveries,
      drifted_accounts: 2,
      exceptions_found: found.run.exceptions.length,
      repairs: repaired.run.repairs.length,
      money_lost: billing.lost,
      money_duplicated: billing.duplicated,
    });
  });
});
