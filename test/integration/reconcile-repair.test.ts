import { describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/pool.js';
import { settlementKey } from '../../src/lifecycle/index.js';
import { reconcile, resolveException } from '../../src/reconcile/run.js';
import { findInconsistencies } from '../../src/reconcile/checks.js';
import { repair } from '../../src/reconcile/repair.js';
import { claimEvents, deadLetter } from '../../src/queue/index.js';
import { MAX_SETTLE_ATTEMPTS } from '../../src/worker/retry-policy.js';
import { settleEvent } from '../../src/worker/settle-event.js';
import { eventRow, jobRow, walletRow } from '../support/fixtures.js';
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
  expectOnly,
  ledgerFingerprint,
  submitJob,
  type World,
} from '../support/reconcile-world.js';
import { forgeEntry } from '../support/forge-entry.js';

/**
 * The classes with a repair (DESIGN "Reconciliation": re-enqueue, rebuild projection,
 * release an expired hold with its own key): each is produced, found again as the same
 * exception, cleared by `reconcile --repair` through the normal keyed paths, and a
 * second repair run does nothing.
 */
const scratch = databasePerTest();
const db = () => scratch.current.pool;

const USAGE = { input_tokens: 300, output_tokens: 200 }; // 300·2 + 200·6 = 1800 micros

/** A repair run that repairs nothing and changes nothing. */
async function expectSecondRepairIdle(): Promise<void> {
  const before = await ledgerFingerprint(db());
  const run = await reconcile(db(), { repair: true });
  expect(run.repairs).toEqual([]);
  expectClean(run);
  expect(await ledgerFingerprint(db())).toEqual(before);
}

async function backdateHold(jobId: string): Promise<void> {
  await db().query(`update holds set expires_at = now() - interval '1 minute' where job_id = $1`, [jobId]);
  await db().query(`update jobs set hold_expires_at = now() - interval '1 minute' where id = $1`, [jobId]);
}

async function backdateEvent(provider: string, eventKey: string, minutes = 6): Promise<void> {
  await db().query(`update webhook_events set received_at = received_at - make_interval(mins => $3) where provider = $1 and event_key = $2`, [provider, eventKey, minutes]);
}

describe('hold_open_past_expiry', () => {
  it('is released by the repair with its own key …:release:1; a second repair does nothing', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    const fresh = await submitJob(db(), world); // not expired: left alone
    await backdateHold(job.id);
    expect(await walletRow(db(), world.wallet.id)).toMatchObject({ debits_pending: 16_000n });

    const [found] = await expectFoundTwice(db(), 'hold_open_past_expiry');
    expect(found!.objects).toEqual({ job_id: job.id, wallet_id: world.wallet.id });
    expect(found!.detail).toMatchObject({ amount: '0.008000' });

    const run = await reconcile(db(), { repair: true });
    const key = settlementKey(world.tenantId, job.id, 'release', 1);
    expect(key).toMatch(/:release:1$/);
    expect(run.repairs).toEqual([{ class: 'hold_open_past_expiry', fingerprint: `hold_open_past_expiry:${job.id}`, action: 'release_hold', result: 'hold_expired' }]);
    expectClean(run);
    const settlements = await db().query('select settlement_key, charge_type, amount, reason from settlements where job_id = $1', [job.id]);
    expect(settlements.rows).toEqual([{ settlement_key: key, charge_type: 'release', amount: 8000n, reason: 'hold_expired' }]);
    expect(await jobRow(db(), job.id)).toMatchObject({ state: 'released', captured: 0n, released: 8000n });
    expect((await jobRow(db(), fresh.id)).state).toBe('reserved');
    expect(await walletRow(db(), world.wallet.id)).toMatchObject({ debits_pending: 8000n, debits_posted: 0n });
    await assertLedgerInvariants(db());
    const cleared = await db().query('select cleared_at, resolved_at from reconciliation_exceptions where id = $1', [found!.id]);
    expect(cleared.rows[0]).toMatchObject({ cleared_at: expect.any(Date), resolved_at: null });

    await expectSecondRepairIdle();
  });

  it('a completion accepted but not yet settled wins over the expiry: the repair leaves the hold, the worker captures', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    await deliver(db(), world, event(world, job, 'job.completed', { usage: USAGE }));
    await backdateHold(job.id);

    const run = await reconcile(db(), { repair: true });
    expect(run.repairs).toEqual([
      { class: 'hold_open_past_expiry', fingerprint: `hold_open_past_expiry:${job.id}`, action: 'release_hold', result: 'skipped: an event of the job is pending; it is settled first' },
    ]);
    expectOnly(run, 'hold_open_past_expiry');
    expect(await count(db(), 'select 1 from settlements where job_id = $1', [job.id])).toBe(0);

    await drain(db());
    expect(await jobRow(db(), job.id)).toMatchObject({ state: 'captured', captured: 1800n });
    expectClean(await reconcile(db()));
    await assertLedgerInvariants(db());
  });

  it('an expired hold whose completion is stuck: one repair run settles the completion first and never releases (no late success)', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    const sent = await deliver(db(), world, event(world, job, 'job.completed', { usage: USAGE }));
    await backdateHold(job.id);
    await backdateEvent(world.provider.name, sent.id);
    const found = (await reconcile(db())).exceptions;
    expect(found.map((e) => e.class).sort()).toEqual(['event_stuck', 'hold_open_past_expiry']);

    const run = await reconcile(db(), { repair: true });
    expect(run.repairs).toContainEqual(expect.objectContaining({ class: 'event_stuck', result: 'applied' }));
    expectClean(run);
    expect(await jobRow(db(), job.id)).toMatchObject({ state: 'captured', captured: 1800n, released: 6200n });
    expect(await count(db(), `select 1 from settlements where job_id = $1 and charge_type = 'release'`, [job.id])).toBe(0);
    expect(await count(db(), 'select 1 from alerts')).toBe(0);
    await assertLedgerInvariants(db());
    await expectSecondRepairIdle();
  });

  it('an expired hold whose event is dead-lettered keeps its hold (a dead letter never drops money) until the event is re-driven', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    const sent = await deliver(db(), world, event(world, job, 'job.completed', { usage: USAGE }));
    const [claim] = await claimEvents(db(), 1, 60);
    expect(await deadLetter(db(), claim!, 'gave up')).toBe(true); // the worker's dead-letter path
    await backdateHold(job.id);
    // only the hold is considered: the event is left dead, as if its repair failed again
    const holdOnly = (await findInconsistencies(db())).filter((f) => f.class === 'hold_open_past_expiry');
    expect(holdOnly).toHaveLength(1);
    expect(await repair(db(), holdOnly)).toEqual([
      expect.objectContaining({ class: 'hold_open_past_expiry', action: 'release_hold', result: expect.stringMatching(/^skipped/) }),
    ]);
    expect((await jobRow(db(), job.id)).state).toBe('reserved');

    const run = await reconcile(db(), { repair: true });
    expectClean(run);
    expect(await jobRow(db(), job.id)).toMatchObject({ state: 'captured', captured: 1800n });
    expect((await eventRow(db(), { provider: world.provider.name, eventKey: sent.id })).state).toBe('applied');
  });
});

describe('event_stuck', () => {
  it('a completion pending for more than 5 minutes is settled by the repair, as a worker would', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    const sent = await deliver(db(), world, event(world, job, 'job.completed', { usage: USAGE }));
    const recent = await deliver(db(), world, event(world, await submitJob(db(), world), 'job.started')); // pending, but young
    expectClean(await reconcile(db()));
    await backdateEvent(world.provider.name, sent.id);

    const [found] = await expectFoundTwice(db(), 'event_stuck');
    expect(found!.objects).toEqual({ provider: world.provider.name, event_key: sent.id, job_id: job.id });
    expect(found!.detail).toMatchObject({ state: 'pending', attempts: 0 });

    const run = await reconcile(db(), { repair: true });
    expect(run.repairs).toEqual([{ class: 'event_stuck', fingerprint: `event_stuck:${world.provider.name}/${sent.id}`, action: 'settle_event', result: 'applied' }]);
    expectClean(run);
    expect(await jobRow(db(), job.id)).toMatchObject({ state: 'captured', captured: 1800n });
    expect(await eventRow(db(), { provider: world.provider.name, eventKey: sent.id })).toMatchObject({
      state: 'applied',
      settlement_key: settlementKey(world.tenantId, job.id, 'capture', 1),
    });
    expect((await eventRow(db(), { provider: world.provider.name, eventKey: recent.id })).state).toBe('pending');
    await assertLedgerInvariants(db());
    await expectSecondRepairIdle();
  });

  it("an event claimed for more than 5 minutes: a live worker's claim is left alone; once its lease expired the repair settles it", async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    const sent = await deliver(db(), world, event(world, job, 'job.completed', { usage: USAGE }));
    const [claim] = await claimEvents(db(), 1, 600); // a worker holds it (and stalls)
    expect(claim!.event_key).toBe(sent.id);
    await backdateEvent(world.provider.name, sent.id);

    const [found] = await expectFoundTwice(db(), 'event_stuck');
    expect(found!.detail).toMatchObject({ state: 'processing', attempts: 1 });
    const skipped = await reconcile(db(), { repair: true });
    expect(skipped.repairs).toEqual([expect.objectContaining({ class: 'event_stuck', result: expect.stringMatching(/^skipped/) })]);
    expect(skipped.exceptions.map((e) => e.id)).toEqual([found!.id]);
    expect(await eventRow(db(), { provider: world.provider.name, eventKey: sent.id })).toMatchObject({ state: 'processing', fencing_token: claim!.fencing_token });

    // the worker's lease runs out (it died): the repair takes the event over with a new token
    await db().query(`update webhook_events set lease_until = now() - interval '1 second' where provider = $1 and event_key = $2`, [world.provider.name, sent.id]);
    const run = await reconcile(db(), { repair: true });
    expect(run.repairs).toEqual([expect.objectContaining({ class: 'event_stuck', result: 'applied' })]);
    expectClean(run);
    // the stalled worker wakes up: its fencing token is stale, it changes nothing
    const before = await ledgerFingerprint(db());
    expect(await settleEvent(db(), claim!)).toEqual({ kind: 'lease_lost' });
    expect(await ledgerFingerprint(db())).toEqual(before);
    expect(await jobRow(db(), job.id)).toMatchObject({ state: 'captured', captured: 1800n });
    await assertLedgerInvariants(db());
    await expectSecondRepairIdle();
  });
});

describe('event_dead', () => {
  /**
   * The worker's own path to a dead letter: every settlement attempt fails (a stalled
   * session holds the job row, and a lock timeout cuts each attempt off) until
   * MAX_SETTLE_ATTEMPTS. The backoff between attempts is skipped by making
   * each retry due now (run_after), like the other backdated timestamps.
   */
  async function deadLetteredCompletion(world: World) {
    const job = await submitJob(db(), world);
    const sent = await deliver(db(), world, event(world, job, 'job.completed', { usage: USAGE }));
    const blocker = await db().connect();
    const impatient = createPool(scratch.current.url, { max: 2 });
    impatient.on('connect', (client) => void client.query('set lock_timeout = 150').catch(() => {}));
    try {
      await blocker.query('begin');
      await blocker.query('select 1 from jobs where id = $1 for update', [job.id]);
      for (let attempt = 1; attempt <= MAX_SETTLE_ATTEMPTS; attempt++) {
        const [claim] = await claimEvents(impatient, 1, 60);
        expect(claim).toMatchObject({ event_key: sent.id, attempts: attempt });
        const outcome = await settleEvent(impatient, claim!);
        expect(outcome.kind).toBe(attempt < MAX_SETTLE_ATTEMPTS ? 'retry' : 'dead');
        await db().query(`update webhook_events set run_after = now() where provider = $1 and event_key = $2 and state = 'pending'`, [world.provider.name, sent.id]);
      }
    } finally {
      await blocker.query('rollback');
      blocker.release();
      await impatient.end();
    }
    expect((await eventRow(db(), { provider: world.provider.name, eventKey: sent.id })).state).toBe('dead');
    expect((await jobRow(db(), job.id)).state).toBe('reserved');
    return { job, sent };
  }

  it('a dead-lettered completion is settled by the repair; a second repair does nothing', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const { job, sent } = await deadLetteredCompletion(world);

    const [found] = await expectFoundTwice(db(), 'event_dead');
    expect(found!.objects).toEqual({ provider: world.provider.name, event_key: sent.id, job_id: job.id });
    expect(found!.detail).toMatchObject({ attempts: MAX_SETTLE_ATTEMPTS, last_error: expect.stringMatching(/lock timeout/) });

    const run = await reconcile(db(), { repair: true });
    expect(run.repairs).toEqual([{ class: 'event_dead', fingerprint: `event_dead:${world.provider.name}/${sent.id}`, action: 'settle_event', result: 'applied' }]);
    expectClean(run);
    expect(await jobRow(db(), job.id)).toMatchObject({ state: 'captured', captured: 1800n, released: 6200n });
    expect(await eventRow(db(), { provider: world.provider.name, eventKey: sent.id })).toMatchObject({ state: 'applied' });
    await assertLedgerInvariants(db());
    await expectSecondRepairIdle();
  });

  it('without --repair nothing is re-driven: the run only reports', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    await deadLetteredCompletion(world);
    const before = await ledgerFingerprint(db());
    const run = await reconcile(db());
    expect(run.repairs).toEqual([]);
    expectOnly(run, 'event_dead');
    expect(await ledgerFingerprint(db())).toEqual(before);
  });
});

describe('projection_drift', () => {
  it("a wallet's projection that no longer equals its entries is rebuilt from them", async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    await deliver(db(), world, event(world, job, 'job.completed', { usage: USAGE }));
    await drain(db());
    const correct = await walletRow(db(), world.wallet.id);
    // both posted columns move by 5: the balance and the currency sum are unchanged, only the projection is wrong
    await db().query('update accounts set debits_posted = debits_posted + 5, credits_posted = credits_posted + 5 where id = $1', [world.wallet.id]);

    const [found] = await expectFoundTwice(db(), 'projection_drift');
    expect(found!.objects).toEqual({ account_id: world.wallet.id, tenant_id: world.tenantId, kind: 'wallet' });
    expect(found!.detail).toEqual({
      projection: ['0.000000', '0.001805', '0.000000', '0.100005'],
      entries: ['0.000000', '0.001800', '0.000000', '0.100000'],
    });

    const run = await reconcile(db(), { repair: true });
    expect(run.repairs).toEqual([{ class: 'projection_drift', fingerprint: `projection_drift:${world.wallet.id}`, action: 'rebuild_projection', result: 'rebuilt' }]);
    expectClean(run);
    expect(await walletRow(db(), world.wallet.id)).toEqual(correct);
    await assertLedgerInvariants(db());
    await expectSecondRepairIdle();
  });

  it('a drift that also breaks the currency sum: one rebuild clears both', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    await db().query('update accounts set debits_pending = debits_pending - 1000 where id = $1', [world.wallet.id]);
    const found = (await reconcile(db())).exceptions;
    expect(found.map((e) => e.class).sort()).toEqual(['currency_sum_nonzero', 'projection_drift']);

    const run = await reconcile(db(), { repair: true });
    expect(run.repairs.map((r) => r.action)).toEqual(['rebuild_projection']);
    expectClean(run);
    expect(await walletRow(db(), world.wallet.id)).toMatchObject({ debits_pending: (await jobRow(db(), job.id)).reserved });
    await assertLedgerInvariants(db());
  });
});

describe('exceptions over time', () => {
  it('a resolved exception that cleared and then comes back is open again (same id), not silently resolved for ever', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const drift = () => db().query('update accounts set debits_posted = debits_posted + 5, credits_posted = credits_posted + 5 where id = $1', [world.wallet.id]);
    await drift();
    const [found] = (await reconcile(db())).exceptions;
    await resolveException(db(), found!.id, 'known: a manual fix in progress');
    expectClean(await reconcile(db())); // still there, but reviewed
    expectClean(await reconcile(db(), { repair: true })); // rebuilt: gone
    await drift(); // it happens again

    const run = await reconcile(db());
    const [again] = expectOnly(run, 'projection_drift');
    expect(again).toMatchObject({ id: found!.id, resolved: false, resolution_note: null });
  });

  it('a run stores what it found; exceptions no longer found are marked cleared', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    await db().query('update accounts set debits_posted = debits_posted + 5, credits_posted = credits_posted + 5 where id = $1', [world.wallet.id]);
    const run = await reconcile(db());
    const stored = await db().query('select repair, clean, summary from reconciliation_runs where id = $1', [run.id]);
    expect(stored.rows[0]).toEqual({ repair: false, clean: false, summary: JSON.parse(JSON.stringify(run)) });
    const repaired = await reconcile(db(), { repair: true });
    const rows = await db().query('select first_run_id, last_run_id, cleared_at from reconciliation_exceptions');
    expect(rows.rows).toEqual([{ first_run_id: run.id, last_run_id: run.id, cleared_at: expect.any(Date) }]);
    expect(repaired.repair).toBe(true);
  });
});

describe('repair runs that cannot repair everything', () => {
  it('a repair that fails is reported in the run, which still completes and reports the exception', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    // a forged void of more than the hold reserved: the entries now say "negative pending",
    // which no projection may hold (accounts_pending_nonnegative), so no rebuild can fix it
    const hold = await db().query<{ pending_entry_id: string; revenue_account_id: string }>('select pending_entry_id, revenue_account_id from holds where job_id = $1', [job.id]);
    await forgeEntry(db(), {
      settlementKey: `${world.tenantId}:forged:over-void`,
      entryType: 'release',
      flags: 'void_pending',
      pendingId: hold.rows[0]!.pending_entry_id,
      debitAccountId: world.wallet.id,
      creditAccountId: hold.rows[0]!.revenue_account_id,
      amount: 9000n,
      currency: 'USD',
      tenantId: world.tenantId,
      jobId: job.id,
    });
    const before = await ledgerFingerprint(db());

    const run = await reconcile(db(), { repair: true });
    expect(run.repairs).toHaveLength(2);
    for (const action of run.repairs) {
      expect(action).toMatchObject({ class: 'projection_drift', action: 'rebuild_projection', result: expect.stringMatching(/^failed: CheckViolation/) });
    }
    expect(run.exceptions.map((e) => [e.class, e.objects.account_id]).sort()).toEqual(
      [
        ['projection_drift', world.wallet.id],
        ['projection_drift', hold.rows[0]!.revenue_account_id],
      ].sort(),
    );
    expect(await count(db(), 'select 1 from reconciliation_runs where id = $1', [run.id])).toBe(1);
    expect(await ledgerFingerprint(db())).toEqual(before);
  });
});

describe('a run limited to some classes', () => {
  it('finds only those classes and leaves the exceptions of the others as they are', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    await db().query('update accounts set debits_posted = debits_posted + 5, credits_posted = credits_posted + 5 where id = $1', [world.wallet.id]);
    const [drift] = expectOnly(await reconcile(db()), 'projection_drift');
    await backdateHold(job.id);

    const partial = await reconcile(db(), { classes: ['hold_open_past_expiry'] });
    expect(partial.classes).toEqual(['hold_open_past_expiry']);
    const [expired] = expectOnly(partial, 'hold_open_past_expiry');
    expect(expired!.objects).toEqual({ job_id: job.id, wallet_id: world.wallet.id });
    const row = await db().query('select cleared_at from reconciliation_exceptions where id = $1', [drift!.id]);
    expect(row.rows[0]!.cleared_at).toBeNull();

    // a full run sees both, the drift still the same exception
    const full = await reconcile(db());
    expect(full.exceptions.map((e) => e.id).sort()).toEqual([drift!.id, expired!.id].sort());
    expect(full.classes).toBeUndefined();
  });
});
