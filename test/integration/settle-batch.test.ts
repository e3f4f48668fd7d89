import { afterEach, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/transaction.js';
import { LeaseLost } from '../../src/queue/index.js';
import { settle } from '../../src/ledger/settle.js';
import { settleBatch } from '../../src/ledger/settle-batch.js';
import { claimEvents } from '../../src/queue/index.js';
import { settleEvents } from '../../src/worker/settle-event.js';
import { freshDatabase } from '../support/database.js';
import { billableOf, createWorld, insertClaimedEvent, jobRow, submitWorldJob, walletRow, type World } from '../support/fixtures.js';
import { assertLedgerInvariants } from '../support/invariants.js';

const db = await freshDatabase({ max: 24 });
afterEach(() => assertLedgerInvariants(db.pool));

const usageOf = (i: number) => ({ input_tokens: (i * 37) % 1000, output_tokens: (i * 91) % 1000 });

async function jobsOn(worlds: World[], count: number) {
  const jobs = [];
  for (let i = 0; i < count; i++) jobs.push(await submitWorldJob(db.pool, worlds[i % worlds.length]!));
  return jobs;
}

/** Pending (unclaimed) completions, as intake stores them. */
async function pendingCompletion(job: { id: string; tenant_id: string; provider: string }, usage: Record<string, number>) {
  const claimed = await insertClaimedEvent(db.pool, job);
  await db.pool.query(
    `update webhook_events set state = 'pending', lease_until = null, attempts = 0, event = $3 where provider = $1 and event_key = $2`,
    [claimed.provider, claimed.eventKey, JSON.stringify({ type: 'job.completed', usage })],
  );
  return claimed;
}

describe('batched settlement', () => {
  it('settles many jobs of a hot wallet and of others in concurrent batches, each exactly once', async () => {
    const hot = await createWorld(db.pool, { funds: 10_000_000n });
    const others = await Promise.all([1, 2, 3].map(() => createWorld(db.pool, { funds: 10_000_000n })));
    const jobs = await jobsOn([hot, hot, hot, ...others], 120);
    const claims = await Promise.all(jobs.map((job) => insertClaimedEvent(db.pool, job)));
    const requests = jobs.map((job, i) => ({ jobId: job.id, event: { type: 'job.completed' as const, usage: usageOf(i) }, claim: claims[i]! }));
    // Batches of 15 in an interleaved order, all at once: they share wallets and revenue accounts.
    const batches: (typeof requests)[] = [];
    for (let b = 0; b < 8; b++) batches.push(requests.filter((_, i) => i % 8 === b).reverse());
    const results = await Promise.all(batches.map((batch) => settleBatch(db.pool, batch)));

    for (const [b, batch] of batches.entries()) {
      batch.forEach((request, i) => {
        const result = results[b]![i]!;
        expect(result).toMatchObject({ outcome: 'applied', jobState: 'captured', replayed: false });
        expect(result.settlement?.settlement_key).toBe(`${jobs.find((j) => j.id === request.jobId)!.tenant_id}:${request.jobId}:capture:1`);
      });
    }
    const settlements = await db.pool.query<{ n: number }>(
      `select count(*)::int as n from settlements where job_id = any($1::uuid[]) and charge_type = 'capture'`,
      [jobs.map((j) => j.id)],
    );
    expect(settlements.rows[0]!.n).toBe(120);
    let hotCharged = 0n;
    for (const [i, job] of jobs.entries()) {
      const row = await jobRow(db.pool, job.id);
      expect(row.captured).toBe(billableOf(usageOf(i)));
      if (job.wallet_id === hot.wallet.id) hotCharged += row.captured!;
    }
    const wallet = await walletRow(db.pool, hot.wallet.id);
    expect(wallet.credits_posted - wallet.debits_posted).toBe(10_000_000n - hotCharged);
    expect(wallet.debits_pending).toBe(0n);
  });

  it('is all or nothing: one lost claim rolls the whole batch back', async () => {
    const world = await createWorld(db.pool, { funds: 1_000_000n });
    const jobs = await jobsOn([world], 5);
    const claims = await Promise.all(jobs.map((job) => insertClaimedEvent(db.pool, job)));
    // Another worker took the third event over: its token moved on.
    await db.pool.query('update webhook_events set fencing_token = fencing_token + 1 where provider = $1 and event_key = $2', [claims[2]!.provider, claims[2]!.eventKey]);
    const batch = jobs.map((job, i) => ({ jobId: job.id, event: { type: 'job.completed' as const, usage: usageOf(i) }, claim: claims[i]! }));
    await expect(settleBatch(db.pool, batch)).rejects.toBeInstanceOf(LeaseLost);
    for (const job of jobs) expect((await jobRow(db.pool, job.id)).state).toBe('reserved');
    const written = await db.pool.query<{ n: number }>('select count(*)::int as n from settlements where job_id = any($1::uuid[])', [jobs.map((j) => j.id)]);
    expect(written.rows[0]!.n).toBe(0);
  });

  it('refuses two events of one job in one batch', async () => {
    const world = await createWorld(db.pool, { funds: 1_000_000n });
    const [job] = await jobsOn([world], 1);
    const a = await insertClaimedEvent(db.pool, job!);
    const b = await insertClaimedEvent(db.pool, job!);
    const event = { type: 'job.completed' as const, usage: usageOf(1) };
    await expect(settleBatch(db.pool, [{ jobId: job!.id, event, claim: a }, { jobId: job!.id, event, claim: b }])).rejects.toThrow(/one event per job/);
  });

  it('through the worker path: a failing event is settled alone, the others still in one go', async () => {
    const world = await createWorld(db.pool, { funds: 1_000_000n });
    const jobs = await jobsOn([world], 6);
    const events = [];
    for (const [i, job] of jobs.entries()) events.push(await pendingCompletion(job, usageOf(i)));
    const claims = await claimEvents(db.pool, 50, 60);
    const mine = claims.filter((c) => jobs.some((j) => j.id === c.job_id));
    expect(mine).toHaveLength(6);
    // One event's claim is lost to another worker before we settle.
    const lost = mine[3]!;
    await db.pool.query('update webhook_events set fencing_token = fencing_token + 1 where provider = $1 and event_key = $2', [lost.provider, lost.event_key]);
    const outcomes = await settleEvents(db.pool, mine);
    expect(outcomes.map((o) => o.kind)).toEqual(['settled', 'settled', 'settled', 'lease_lost', 'settled', 'settled']);
    for (const claim of mine) {
      const state = (await jobRow(db.pool, claim.job_id)).state;
      expect(state).toBe(claim === lost ? 'reserved' : 'captured');
    }
  });

  it('a batch retried after it committed writes nothing twice', async () => {
    const world = await createWorld(db.pool, { funds: 1_000_000n });
    const jobs = await jobsOn([world], 4);
    const claims = await Promise.all(jobs.map((job) => insertClaimedEvent(db.pool, job)));
    const batch = jobs.map((job, i) => ({ jobId: job.id, event: { type: 'job.completed' as const, usage: usageOf(i) }, claim: claims[i]! }));
    await settleBatch(db.pool, batch);
    // The same claims again (as after a COMMIT whose answer was lost): each event is no
    // longer 'processing' under its token, so the batch refuses and writes nothing.
    await expect(settleBatch(db.pool, batch)).rejects.toBeInstanceOf(LeaseLost);
    const entries = await withTransaction(db.pool, (tx) =>
      tx.query<{ n: number }>(`select count(*)::int as n from ledger_entries where job_id = any($1::uuid[]) and entry_type = 'capture'`, [jobs.map((j) => j.id)]),
    );
    expect(entries.rows[0]!.n).toBe(jobs.filter((_, i) => billableOf(usageOf(i)) > 0n).length);
  });

  it('names in its wallet_overdrawn alert the event whose charge took the wallet below zero (issue 11.8)', async () => {
    const world = await createWorld(db.pool, { funds: 8_000n });
    const [a] = await jobsOn([world], 1); // reserves 8000
    await settle(db.pool, { jobId: a!.id, event: { type: 'job.completed', usage: { input_tokens: 500 } } }); // captures 1000
    // balance 7000: two jobs reserve 3500 each
    const b = await submitWorldJob(db.pool, world, { input_tokens: 1750 });
    const c = await submitWorldJob(db.pool, world, { input_tokens: 1750 });
    const charge = (job: typeof b, event: Parameters<typeof settleBatch>[1][number]['event'], claim: Awaited<ReturnType<typeof insertClaimedEvent>>) => ({ jobId: job.id, event, claim });
    const batch = [
      // 7000 − 3500 = 3500: still covered
      charge(b, { type: 'job.completed', usage: { input_tokens: 1750 } }, await insertClaimedEvent(db.pool, b)),
      // delivered work corrected up to A's hold: +7000 takes the balance to −3500
      charge(a!, { type: 'job.usage_corrected', correction: 1, usage: { input_tokens: 1000, output_tokens: 1000 } }, await insertClaimedEvent(db.pool, a!, { type: 'job.usage_corrected' })),
      // charged while overdrawn: −7000
      charge(c, { type: 'job.completed', usage: { input_tokens: 1750 } }, await insertClaimedEvent(db.pool, c)),
    ];
    const results = await settleBatch(db.pool, batch);
    expect(results.map((r) => r.alerts)).toEqual([[], ['wallet_overdrawn'], ['wallet_overdrawn']]);
    const wallet = await walletRow(db.pool, world.wallet.id);
    expect(wallet.credits_posted - wallet.debits_posted).toBe(-7_000n);

    const alerts = await db.pool.query<{ job_id: string; source: string; detail: Record<string, unknown> }>(
      `select job_id, source, detail from alerts where class = 'wallet_overdrawn' and detail->>'wallet_id' = $1 order by (detail->>'balance')::bigint desc`,
      [world.wallet.id],
    );
    expect(alerts.rows).toEqual([
      {
        job_id: a!.id,
        source: results[1]!.settlement!.settlement_key,
        detail: { wallet_id: world.wallet.id, balance: '-3500', provider: batch[1]!.claim.provider, event_key: batch[1]!.claim.eventKey },
      },
      {
        job_id: c.id,
        source: results[2]!.settlement!.settlement_key,
        detail: { wallet_id: world.wallet.id, balance: '-7000', provider: batch[2]!.claim.provider, event_key: batch[2]!.claim.eventKey },
      },
    ]);
  });
});
