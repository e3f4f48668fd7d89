import { describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/transaction.js';
import { newId } from '../../src/ids.js';
import { settlementKey } from '../../src/lifecycle/index.js';
import { importProviderUsage } from '../../src/reconcile/provider-usage.js';
import { RAISED_BEFORE_DETAILS } from '../../src/reconcile/checks/alerts.js';
import { reconcile, resolveException } from '../../src/reconcile/run.js';
import { creditWallet, insertWallet, jobRow, walletRow } from '../support/fixtures.js';
import { assertLedgerInvariants } from '../support/invariants.js';
import {
  count,
  createWorld,
  databasePerTest,
  deliver,
  deliverRefused,
  drain,
  event,
  expectClean,
  expectFoundTwice,
  expectNoRepair,
  expectResolvedMakesClean,
  ledgerFingerprint,
  submitJob,
} from '../support/reconcile-world.js';
import { forgeEntryIn } from '../support/forge-entry.js';

/**
 * CONTRACT "Reconciliation exception classes": each class is produced by a test that
 * creates exactly that inconsistency, found again as the same exception, and (the
 * classes without a repair) left alone by a repair run and made clean by an operator's
 * resolution. The repairable classes are in reconcile-repair.test.ts.
 *
 * Where the system itself produces the inconsistency, the test goes through its normal
 * paths: submitJob, creditWallet, the real intake (receiveWebhook) and the worker's
 * claim/settle. SQL only forges what no correct run produces (a terminal job without its
 * settlement, a settlement without entries, a hold both captured and released, a
 * cross-currency entry) — by INSERTs and projection UPDATEs; no append-only trigger is
 * disabled anywhere in this file.
 */
const scratch = databasePerTest();
const db = () => scratch.current.pool;
const resolve = (id: string, note: string) => resolveException(db(), id, note);

async function capturedJob(usage: Record<string, number> = { input_tokens: 300, output_tokens: 200 }) {
  const world = await createWorld(db(), { funds: 100_000n });
  const job = await submitJob(db(), world);
  await deliver(db(), world, event(world, job, 'job.completed', { usage }));
  const outcomes = await drain(db());
  expect(outcomes.map((o) => o.kind)).toEqual(['settled']);
  expect((await jobRow(db(), job.id)).state).toBe('captured');
  return { world, job };
}

/** What every alert of a provider's event says of where it came from. */
function raisedBy(world: { provider: { name: string } }, eventKey: unknown, eventType: string) {
  return { currency: 'USD', price_version: expect.any(Number), event_type: eventType, provider: world.provider.name, event_key: eventKey };
}

async function releasedJob() {
  const world = await createWorld(db(), { funds: 100_000n });
  const job = await submitJob(db(), world);
  await deliver(db(), world, event(world, job, 'job.failed'));
  await drain(db());
  expect((await jobRow(db(), job.id)).state).toBe('released');
  return { world, job };
}

describe('a consistent database', () => {
  it('normal work of every kind reconciles clean, and stays clean run after run', async () => {
    const world = await createWorld(db(), { funds: 1_000_000n });
    const captured = await submitJob(db(), world, { ref: 'pj-captured' });
    const failed = await submitJob(db(), world);
    const corrected = await submitJob(db(), world, { ref: 'pj-corrected' });
    const open = await submitJob(db(), world);
    await deliver(db(), world, event(world, captured, 'job.started'));
    await deliver(db(), world, event(world, captured, 'job.completed', { usage: { input_tokens: 300, output_tokens: 200 } }));
    await deliver(db(), world, event(world, failed, 'job.failed'));
    await deliver(db(), world, event(world, corrected, 'job.completed', { usage: { input_tokens: 100, output_tokens: 100 } }));
    await deliver(db(), world, event(world, corrected, 'job.usage_corrected', { correction: 1, usage: { input_tokens: 50, output_tokens: 20 } }));
    await deliver(db(), world, event(world, open, 'job.progress'));
    const dup = event(world, captured, 'job.completed', { usage: { input_tokens: 300, output_tokens: 200 } });
    const first = await deliver(db(), world, dup);
    expect((await deliver(db(), world, dup, { id: first.id })).status).toBe('already_accepted');
    await drain(db());
    await withTransaction(db(), (tx) =>
      importProviderUsage(tx, 'agreeing', [
        { provider: world.provider.name, provider_job_ref: 'pj-captured', usage: { output_tokens: 200, input_tokens: 300 } },
        { provider: world.provider.name, provider_job_ref: 'pj-corrected', usage: { input_tokens: 50, output_tokens: 20 } },
      ]),
    );
    await assertLedgerInvariants(db());

    const run = await reconcile(db());
    expectClean(run);
    expect(run.resolved_exceptions).toEqual([]);
    expectClean(await reconcile(db(), { repair: true }));
    expect(await count(db(), 'select 1 from reconciliation_exceptions')).toBe(0);
    expect(await count(db(), 'select 1 from reconciliation_runs')).toBe(2);
  });
});

describe('terminal_job_without_settlement', () => {
  it('a job marked released with no release settlement (forged with SQL: settle never does this)', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    await submitJob(db(), world); // an open job beside it is no exception
    await db().query(`update jobs set state = 'released', captured = 0, released = reserved where id = $1`, [job.id]);

    const [found] = await expectFoundTwice(db(), 'terminal_job_without_settlement');
    expect(found!.objects).toEqual({ job_id: job.id, tenant_id: world.tenantId });
    expect(found!.detail).toEqual({ state: 'released' });
    await expectNoRepair(db(), [found!]);
    await expectResolvedMakesClean(db(), [found!], resolve);
  });
});

describe('settlement_without_entries', () => {
  it('an adjustment settlement whose ledger entry was never written (forged INSERT)', async () => {
    const { world, job } = await capturedJob();
    const key = settlementKey(world.tenantId, job.id, 'adjustment', 1);
    await db().query(
      `insert into settlements (id, settlement_key, tenant_id, job_id, charge_type, version, amount) values ($1, $2, $3, $4, 'adjustment', 1, 500)`,
      [newId(), key, world.tenantId, job.id],
    );

    const [found] = await expectFoundTwice(db(), 'settlement_without_entries');
    expect(found!.objects).toEqual({ settlement_key: key, job_id: job.id });
    expect(found!.detail).toEqual({ charge_type: 'adjustment', amount: '0.000500', missing: ['adjustment'] });
    await expectNoRepair(db(), [found!]);
    await expectResolvedMakesClean(db(), [found!], resolve);
  });

  it('a capture settlement with neither its capture nor its release_remainder entry', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    const key = settlementKey(world.tenantId, job.id, 'capture', 1);
    await db().query(
      `insert into settlements (id, settlement_key, tenant_id, job_id, charge_type, version, amount, remainder) values ($1, $2, $3, $4, 'capture', 1, 3000, 5000)`,
      [newId(), key, world.tenantId, job.id],
    );
    const [found] = await expectFoundTwice(db(), 'settlement_without_entries');
    expect(found!.objects).toEqual({ settlement_key: key, job_id: job.id });
    expect(found!.detail).toEqual({ charge_type: 'capture', amount: '0.003000', missing: ['capture', 'release_remainder'] });
  });
});

describe('hold_captured_and_released', () => {
  it('a captured job that also has a release settlement (forged: the hold trigger stops settle from ever writing one)', async () => {
    const { world, job } = await capturedJob();
    const release = settlementKey(world.tenantId, job.id, 'release', 1);
    // amount 0: a release that voids nothing calls for no entries, so this is only the double resolution
    await db().query(
      `insert into settlements (id, settlement_key, tenant_id, job_id, charge_type, version, amount, reason) values ($1, $2, $3, $4, 'release', 1, 0, 'forged')`,
      [newId(), release, world.tenantId, job.id],
    );

    const [found] = await expectFoundTwice(db(), 'hold_captured_and_released');
    expect(found!.objects).toEqual({ job_id: job.id });
    expect(found!.detail).toEqual({ settlements: [settlementKey(world.tenantId, job.id, 'capture', 1), release].sort() });
    await expectNoRepair(db(), [found!]);
    await expectResolvedMakesClean(db(), [found!], resolve);
  });
});

describe('currency_sum_nonzero', () => {
  it('an entry that moves USD out of a USD wallet into an EUR wallet (forged; projections kept equal to the entries)', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const eur = await insertWallet(db(), world.tenantId, 'EUR');
    await withTransaction(db(), async (tx) => {
      await forgeEntryIn(tx, {
        settlementKey: `${world.tenantId}:forged:cross-currency`,
        entryType: 'credit',
        flags: 'posted',
        debitAccountId: world.wallet.id,
        creditAccountId: eur.id,
        amount: 700n,
        currency: 'USD',
        tenantId: world.tenantId,
      });
      await tx.query('update accounts set debits_posted = debits_posted + 700 where id = $1', [world.wallet.id]);
      await tx.query('update accounts set credits_posted = credits_posted + 700 where id = $1', [eur.id]);
    });

    const found = await expectFoundTwice(db(), 'currency_sum_nonzero');
    expect(found.map((e) => [e.objects, e.detail]).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([
      [{ currency: 'EUR' }, { posted_sum: '0.000700', pending_sum: '0.000000' }],
      [{ currency: 'USD' }, { posted_sum: '-0.000700', pending_sum: '0.000000' }],
    ]);
    await expectNoRepair(db(), found);
    await expectResolvedMakesClean(db(), found, resolve);
  });
});

describe('usage_mismatch', () => {
  it("the provider's imported usage differs from the usage we accepted and billed", async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world, { ref: 'pj-1' });
    const agreeing = await submitJob(db(), world, { ref: 'pj-2' });
    await deliver(db(), world, event(world, job, 'job.completed', { usage: { input_tokens: 300, output_tokens: 200 } }));
    await deliver(db(), world, event(world, agreeing, 'job.completed', { usage: { input_tokens: 100, output_tokens: 100 } }));
    await drain(db());
    expectClean(await reconcile(db()));

    const imported = await withTransaction(db(), (tx) =>
      importProviderUsage(tx, 'import-1', [
        { provider: world.provider.name, provider_job_ref: 'pj-1', usage: { input_tokens: 300, output_tokens: 250 } },
        { provider: world.provider.name, provider_job_ref: 'pj-2', usage: { input_tokens: 100, output_tokens: 100 } },
      ]),
    );
    expect(imported).toEqual({ imported: 2, already_imported: 0 });

    const [found] = await expectFoundTwice(db(), 'usage_mismatch');
    expect(found!.objects).toEqual({ job_id: job.id, provider: world.provider.name, provider_job_ref: 'pj-1' });
    expect(found!.detail).toEqual({
      accepted: { input_tokens: 300, output_tokens: 200 },
      provider_reported: { input_tokens: 300, output_tokens: 250 },
      import_id: 'import-1',
    });
    await expectNoRepair(db(), [found!]);
    await expectResolvedMakesClean(db(), [found!], resolve);
  });

  it('compares the newest applied usage (after a correction), and a later agreeing import clears the exception', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world, { ref: 'pj-c' });
    await deliver(db(), world, event(world, job, 'job.completed', { usage: { input_tokens: 300, output_tokens: 200 } }));
    await drain(db());
    await withTransaction(db(), (tx) =>
      importProviderUsage(tx, 'before-correction', [{ provider: world.provider.name, provider_job_ref: 'pj-c', usage: { input_tokens: 300, output_tokens: 100 } }]),
    );
    const [found] = await expectFoundTwice(db(), 'usage_mismatch');

    // the provider corrects the usage: we now agree with its record
    await deliver(db(), world, event(world, job, 'job.usage_corrected', { correction: 1, usage: { input_tokens: 300, output_tokens: 100 } }));
    await drain(db());
    const run = await reconcile(db());
    expectClean(run);
    expect(run.resolved_exceptions).toEqual([]);
    const row = await db().query('select cleared_at from reconciliation_exceptions where id = $1', [found!.id]);
    expect(row.rows[0]!.cleared_at).toBeInstanceOf(Date);

    // a newer import that disagrees again is reported against the newest record
    await withTransaction(db(), (tx) =>
      importProviderUsage(tx, 'after-correction', [{ provider: world.provider.name, provider_job_ref: 'pj-c', usage: { input_tokens: 301, output_tokens: 100 } }]),
    );
    const [again] = await expectFoundTwice(db(), 'usage_mismatch');
    expect(again!.detail).toMatchObject({ accepted: { input_tokens: 300, output_tokens: 100 }, provider_reported: { input_tokens: 301, output_tokens: 100 }, import_id: 'after-correction' });
    expect(again!.id).not.toBe(found!.id); // other numbers: another inconsistency

    // the same numbers imported again under another id: the same inconsistency, the same exception
    await withTransaction(db(), (tx) =>
      importProviderUsage(tx, 'resent', [{ provider: world.provider.name, provider_job_ref: 'pj-c', usage: { output_tokens: 100, input_tokens: 301 } }]),
    );
    const [resent] = (await reconcile(db())).exceptions;
    expect(resent).toMatchObject({ id: again!.id, class: 'usage_mismatch', detail: { import_id: 'resent' } });
  });

  it('a dimension reported as 0 on one side and absent on the other is no mismatch', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world, { ref: 'pj-z' });
    await deliver(db(), world, event(world, job, 'job.completed', { usage: { input_tokens: 100, output_tokens: 0 } }));
    await drain(db());
    await withTransaction(db(), (tx) =>
      importProviderUsage(tx, 'zeros', [{ provider: world.provider.name, provider_job_ref: 'pj-z', usage: { input_tokens: 100, cached_input_tokens: 0 } }]),
    );
    expectClean(await reconcile(db()));
  });

  it('provider usage for a job we never billed: a record for an unknown job ref, and one for a job whose hold is still open', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const open = await submitJob(db(), world, { ref: 'pj-open' });
    await withTransaction(db(), (tx) =>
      importProviderUsage(tx, 'unbilled', [
        { provider: world.provider.name, provider_job_ref: 'pj-unknown', usage: { input_tokens: 10 } },
        { provider: world.provider.name, provider_job_ref: 'pj-open', usage: { input_tokens: 20 } },
      ]),
    );
    const found = await expectFoundTwice(db(), 'usage_mismatch');
    const byRef = Object.fromEntries(found.map((e) => [e.objects.provider_job_ref as string, e]));
    expect(Object.keys(byRef).sort()).toEqual(['pj-open', 'pj-unknown']);
    expect(byRef['pj-open']!.objects).toEqual({ job_id: open.id, provider: world.provider.name, provider_job_ref: 'pj-open' });
    expect(byRef['pj-open']!.detail).toEqual({ accepted: null, provider_reported: { input_tokens: 20 }, import_id: 'unbilled' });
    expect(byRef['pj-unknown']!.objects).toEqual({ job_id: null, provider: world.provider.name, provider_job_ref: 'pj-unknown' });
    expect(byRef['pj-unknown']!.detail).toEqual({ accepted: null, provider_reported: { input_tokens: 10 }, import_id: 'unbilled' });
  });
});

describe('event_key_conflict', () => {
  it('the same event key delivered again with a different payload', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    const first = await deliver(db(), world, event(world, job, 'job.completed', { usage: { input_tokens: 300, output_tokens: 200 } }));
    await drain(db());
    const before = await ledgerFingerprint(db());
    const refused = await deliverRefused(db(), world, event(world, job, 'job.completed', { usage: { input_tokens: 900, output_tokens: 900 } }), { id: first.id });
    expect([refused.status, refused.code]).toEqual([409, 'event_key_conflict']);
    expect(await ledgerFingerprint(db())).toEqual(before);

    const [found] = await expectFoundTwice(db(), 'event_key_conflict');
    expect(found!.objects).toEqual({ provider: world.provider.name, event_key: first.id, job_id: job.id });
    expect(found!.detail).toMatchObject({ deliveries: 1 });

    // the provider retries the conflicting delivery: still the same exception
    await deliverRefused(db(), world, event(world, job, 'job.completed', { usage: { input_tokens: 900, output_tokens: 900 } }), { id: first.id });
    const [again] = (await reconcile(db())).exceptions;
    expect(again).toMatchObject({ id: found!.id, class: 'event_key_conflict', detail: { deliveries: 2 } });

    await expectNoRepair(db(), [found!]);
    await expectResolvedMakesClean(db(), [found!], resolve);
  });
});

describe('event_mismatch', () => {
  it("an event whose model disagrees with the job's: recorded, nothing billed", async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    const before = await ledgerFingerprint(db());
    const body = event(world, job, 'job.completed', { usage: { input_tokens: 300, output_tokens: 200 }, model: 'some-other-model' });
    const refused = await deliverRefused(db(), world, body, { id: 'evt-mismatch' });
    expect([refused.status, refused.code]).toEqual([422, 'event_mismatch']);
    expect(await ledgerFingerprint(db())).toEqual(before);

    const [found] = await expectFoundTwice(db(), 'event_mismatch');
    expect(found!.objects).toEqual({ provider: world.provider.name, event_key: 'evt-mismatch', job_id: job.id });
    expect(found!.detail).toEqual({ deliveries: 1, mismatch: 'model' });
    await expectNoRepair(db(), [found!]);
    await expectResolvedMakesClean(db(), [found!], resolve);
  });
});

describe('late_success_after_release', () => {
  it('a completion that arrives after the job was released (failed): no effect, flagged', async () => {
    const { world, job } = await releasedJob();
    const late = await deliver(db(), world, event(world, job, 'job.completed', { usage: { input_tokens: 300, output_tokens: 200 } }));
    const [outcome] = await drain(db());
    expect(outcome).toMatchObject({ kind: 'settled', result: { outcome: 'no_effect' } });
    expect(await jobRow(db(), job.id)).toMatchObject({ state: 'released', captured: 0n });

    const [found] = await expectFoundTwice(db(), 'late_success_after_release');
    expect(found!.objects).toEqual({ job_id: job.id, tenant_id: world.tenantId, source: `${world.provider.name}/${late.id}` });
    // what was reported, what it would have cost (300 × 2 + 200 × 6 micros, within the 0.008 hold), and that nothing was billed
    expect(found!.detail).toEqual({
      ...raisedBy(world, late.id, 'job.completed'),
      usage: { input_tokens: 300, output_tokens: 200 },
      price: '0.001800',
      reserved: '0.008000',
      would_have_billed: '0.001800',
      billed: '0.000000',
      raised_at: expect.any(String),
    });
    await expectNoRepair(db(), [found!]);
    await expectResolvedMakesClean(db(), [found!], resolve);
  });
});

describe('late_usage_after_release', () => {
  it('a cancel with usage, and a usage correction, after the job was released: each flagged once', async () => {
    const { world, job } = await releasedJob();
    const canceled = await deliver(db(), world, event(world, job, 'job.canceled', { usage: { input_tokens: 10, output_tokens: 0 } }));
    const corrected = await deliver(db(), world, event(world, job, 'job.usage_corrected', { correction: 1, usage: { input_tokens: 20, output_tokens: 0 } }));
    await drain(db());
    expect(await jobRow(db(), job.id)).toMatchObject({ state: 'released', captured: 0n, adjusted: 0n });

    const found = await expectFoundTwice(db(), 'late_usage_after_release');
    expect(found.map((e) => e.objects).sort((a, b) => String(a.source).localeCompare(String(b.source)))).toEqual(
      [canceled.id, corrected.id].map((id) => ({ job_id: job.id, tenant_id: world.tenantId, source: `${world.provider.name}/${id}` })).sort((a, b) => a.source.localeCompare(b.source)),
    );
    const detailOf = (id: string) => found.find((e) => e.objects.source === `${world.provider.name}/${id}`)!.detail;
    const late = { reserved: '0.008000', billed: '0.000000', raised_at: expect.any(String) };
    expect(detailOf(canceled.id)).toEqual({
      ...raisedBy(world, canceled.id, 'job.canceled'),
      ...late,
      usage: { input_tokens: 10, output_tokens: 0 },
      price: '0.000020',
      would_have_billed: '0.000020',
    });
    expect(detailOf(corrected.id)).toEqual({
      ...raisedBy(world, corrected.id, 'job.usage_corrected'),
      ...late,
      usage: { input_tokens: 20, output_tokens: 0 },
      correction: 1,
      price: '0.000040',
      would_have_billed: '0.000040',
    });
    await expectNoRepair(db(), found);
    await expectResolvedMakesClean(db(), found, resolve);
  });
});

describe('usage_exceeds_reservation', () => {
  it('usage priced above the reservation: the capture is capped at the hold and flagged', async () => {
    const { world, job } = await capturedJob({ input_tokens: 5000, output_tokens: 1000 }); // 16000 micros > 8000 reserved
    expect(await jobRow(db(), job.id)).toMatchObject({ captured: 8000n, released: 0n });

    const [found] = await expectFoundTwice(db(), 'usage_exceeds_reservation');
    expect(found!.objects).toEqual({ job_id: job.id, tenant_id: world.tenantId, source: settlementKey(world.tenantId, job.id, 'capture', 1) });
    expect(found!.detail).toEqual({
      ...raisedBy(world, expect.any(String), 'job.completed'),
      settlement_key: settlementKey(world.tenantId, job.id, 'capture', 1),
      charge_type: 'capture',
      usage: { input_tokens: 5000, output_tokens: 1000 },
      price: '0.016000',
      reserved: '0.008000',
      billed: '0.008000',
      unbilled: '0.008000',
      charged: '0.008000',
      raised_at: expect.any(String),
    });
    await expectNoRepair(db(), [found!]);
    await expectResolvedMakesClean(db(), [found!], resolve);
  });

  it('a correction priced above the reservation: the adjustment bills up to the hold, and says what it charged and what went unbilled', async () => {
    const { world, job } = await capturedJob(); // 0.0018 captured
    const corrected = await deliver(db(), world, event(world, job, 'job.usage_corrected', { correction: 1, usage: { input_tokens: 5000, output_tokens: 1000 } }));
    await drain(db());
    expect(await jobRow(db(), job.id)).toMatchObject({ captured: 1800n, adjusted: 6200n });

    const [found] = await expectFoundTwice(db(), 'usage_exceeds_reservation');
    const key = settlementKey(world.tenantId, job.id, 'adjustment', 1);
    expect(found!.objects).toEqual({ job_id: job.id, tenant_id: world.tenantId, source: key });
    expect(found!.detail).toEqual({
      ...raisedBy(world, corrected.id, 'job.usage_corrected'),
      settlement_key: key,
      charge_type: 'adjustment',
      usage: { input_tokens: 5000, output_tokens: 1000 },
      price: '0.016000',
      reserved: '0.008000',
      billed: '0.008000',
      unbilled: '0.008000',
      charged: '0.006200',
      raised_at: expect.any(String),
    });
  });
});

describe('alerts raised before they kept their amounts', () => {
  it('are still exceptions, whose detail says so', async () => {
    const { world, job } = await releasedJob();
    // forged as the code before raised them: detail {} (or none)
    const forged = [
      ['late_success_after_release', '{}'],
      ['late_usage_after_release', null],
      ['usage_exceeds_reservation', '{}'],
    ] as const;
    for (const [cls, detail] of forged) {
      await db().query(`insert into alerts (id, tenant_id, job_id, class, source, detail) values ($1, $2, $3, $4, $5, $6)`, [
        newId(),
        world.tenantId,
        job.id,
        cls,
        `${world.provider.name}/old-${cls}`,
        detail,
      ]);
    }
    const run = await reconcile(db());
    expect(run.exceptions.map((e) => e.class).sort()).toEqual(forged.map(([cls]) => cls).sort());
    for (const found of run.exceptions) {
      expect(found.objects).toEqual({ job_id: job.id, tenant_id: world.tenantId, source: `${world.provider.name}/old-${found.class}` });
      expect(found.detail).toEqual({ note: RAISED_BEFORE_DETAILS, raised_at: expect.any(String) });
    }
    await expectResolvedMakesClean(db(), run.exceptions, resolve);
  });
});

describe('wallet_overdrawn', () => {
  it('an upward correction (work already delivered) charged after the freed funds were spent takes the balance below zero', async () => {
    const world = await createWorld(db(), { funds: 8000n });
    // A reserves all 8000, captures 2000; B reserves the freed 6000 and captures it
    const a = await submitJob(db(), world, { limits: { input_tokens: 1000, output_tokens: 1000 } });
    await deliver(db(), world, event(world, a, 'job.completed', { usage: { input_tokens: 1000, output_tokens: 0 } }));
    await drain(db());
    const b = await submitJob(db(), world, { limits: { input_tokens: 0, output_tokens: 1000 } });
    await deliver(db(), world, event(world, b, 'job.completed', { usage: { input_tokens: 0, output_tokens: 1000 } }));
    await drain(db());
    expect(await walletRow(db(), world.wallet.id)).toMatchObject({ credits_posted: 8000n, debits_posted: 8000n });
    expectClean(await reconcile(db()));

    // A's usage is corrected up to its full hold: +6000, always posted
    await deliver(db(), world, event(world, a, 'job.usage_corrected', { correction: 1, usage: { input_tokens: 1000, output_tokens: 1000 } }));
    await drain(db());
    expect(await walletRow(db(), world.wallet.id)).toMatchObject({ credits_posted: 8000n, debits_posted: 14_000n });
    await assertLedgerInvariants(db());

    const [found] = await expectFoundTwice(db(), 'wallet_overdrawn');
    expect(found!.objects).toEqual({ wallet_id: world.wallet.id, tenant_id: world.tenantId });
    // the debt: A's correction, which no grant could fund; the alert of that settlement, which took the wallet below zero
    expect(found!.detail).toEqual({
      balance: '-0.006000',
      debt: '0.006000',
      currency: 'USD',
      overdrawn_by: { source: settlementKey(world.tenantId, a.id, 'adjustment', 1), job_id: a.id, raised_at: expect.any(String) },
    });
    await expectNoRepair(db(), [found!]);
    await expectResolvedMakesClean(db(), [found!], resolve);

    // a top-up clears it: the next run no longer finds it at all
    await creditWallet(db(), world.wallet, 6000n);
    const run = await reconcile(db());
    expectClean(run);
    expect(run.resolved_exceptions).toEqual([]);
  });
});
