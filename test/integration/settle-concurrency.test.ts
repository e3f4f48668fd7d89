import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/pool.js';
import { settle, type SettleResult } from '../../src/ledger/settle.js';
import type { LifecycleEvent } from '../../src/lifecycle/index.js';
import { freshDatabase } from '../support/database.js';
import {
  RESERVATION,
  billableOf,
  createWorld,
  eventRow,
  insertClaimedEvent,
  jobRow,
  submitWorldJob,
  walletRow,
  type World,
} from '../support/fixtures.js';
import { JobGate } from '../support/gate.js';
import { assertLedgerInvariants } from '../support/invariants.js';

const POOL_MAX = 20;
const db = await freshDatabase({ max: POOL_MAX });
// The gate holds job locks on a connection of its own, outside the contenders' pool.
const gatePool = createPool(db.url, { max: 2 });
afterAll(() => gatePool.end());
afterEach(() => assertLedgerInvariants(db.pool));

/** Deterministic pseudo-random numbers (so a failure reproduces). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

function shuffle<T>(items: T[], next: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

async function settlementsOf(jobId: string) {
  const result = await db.pool.query<{ settlement_key: string; charge_type: string; version: number; amount: bigint }>(
    'select settlement_key, charge_type, version, amount from settlements where job_id = $1 order by created_at, id',
    [jobId],
  );
  return result.rows;
}

async function entriesOf(jobId: string) {
  const result = await db.pool.query<{ settlement_key: string; entry_type: string; amount: bigint }>(
    'select settlement_key, entry_type, amount from ledger_entries where job_id = $1 order by id',
    [jobId],
  );
  return result.rows;
}

describe('64 concurrent settle() calls for one job', () => {
  it('of the same completion: one settlement, one set of entries, every caller gets it, one of them fresh', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    const usage = { input_tokens: 321, output_tokens: 123 };

    const gate = await JobGate.close(gatePool, [job.id]);
    const calls = Array.from({ length: 64 }, () => settle(db.pool, { jobId: job.id, event: { type: 'job.completed', usage } }));
    // At least 16 sessions are inside settle's transaction, blocked on the job's row lock.
    expect(await gate.waitForWaiters(16)).toBeGreaterThanOrEqual(16);
    await gate.open();
    const results = await Promise.all(calls);

    const ids = new Set(results.map((r) => r.settlement?.id));
    expect(ids.size).toBe(1);
    expect(ids.has(undefined)).toBe(false);
    const first = results.find((r) => !r.replayed)!;
    for (const r of results) {
      expect(r.settlement).toEqual(first.settlement);
      expect(r.jobState).toBe('captured');
    }
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect(first.outcome).toBe('applied');
    expect(results.filter((r) => r.outcome === 'no_effect')).toHaveLength(63);
    expect(first.settlement).toMatchObject({ charge_type: 'capture', version: 1, amount: billableOf(usage) });

    expect(await settlementsOf(job.id)).toHaveLength(1);
    const key = first.settlement!.settlement_key;
    expect((await entriesOf(job.id)).map((e) => [e.settlement_key, e.entry_type, e.amount])).toEqual([
      [`${world.tenantId}:${job.id}:reserve:1`, 'reserve', RESERVATION],
      [key, 'capture', billableOf(usage)],
      [key, 'release_remainder', RESERVATION - billableOf(usage)],
    ]);
    expect((await walletRow(db.pool, world.wallet.id)).debits_posted).toBe(billableOf(usage));
  });

  it('of different completions (different event keys and usage): still one capture', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    const usages = Array.from({ length: 64 }, (_, i) => ({ input_tokens: 10 * (i + 1), output_tokens: i }));

    const gate = await JobGate.close(gatePool, [job.id]);
    const calls = usages.map((usage, i) =>
      settle(db.pool, {
        jobId: job.id,
        // a third of them are provider cancels with usage: the same capture phase
        event: i % 3 === 0 ? { type: 'job.canceled', usage } : { type: 'job.completed', usage },
      }),
    );
    await gate.waitForWaiters(16);
    await gate.open();
    const results = await Promise.all(calls);

    const winner = results.filter((r) => !r.replayed);
    expect(winner).toHaveLength(1);
    const settlement = winner[0]!.settlement!;
    expect(usages.map((u) => billableOf(u))).toContain(settlement.amount);
    for (const r of results) expect(r.settlement?.id).toBe(settlement.id);
    expect(await settlementsOf(job.id)).toHaveLength(1);
    expect((await entriesOf(job.id)).filter((e) => e.entry_type === 'capture')).toHaveLength(settlement.amount > 0n ? 1 : 0);
    expect(await jobRow(db.pool, job.id)).toMatchObject({ state: 'captured', captured: settlement.amount });
  });
});

describe('claimed events with different event keys for the same job and phase', () => {
  it('16 concurrent completions, each its own event: one capture, every event recorded against it', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    const claims = [];
    for (let i = 0; i < 16; i++) claims.push(await insertClaimedEvent(db.pool, job));
    const gate = await JobGate.close(gatePool, [job.id]);
    const calls = claims.map((claim, i) =>
      settle(db.pool, { jobId: job.id, claim, event: { type: 'job.completed', usage: { input_tokens: 100 + i } } }),
    );
    await gate.waitForWaiters(16);
    await gate.open();
    const results = await Promise.all(calls);
    expect(results.filter((r) => r.outcome === 'applied')).toHaveLength(1);
    const key = results.find((r) => r.outcome === 'applied')!.settlement!.settlement_key;
    expect(await settlementsOf(job.id)).toHaveLength(1);
    const states = await Promise.all(claims.map((claim) => eventRow(db.pool, claim)));
    expect(states.filter((e) => e.state === 'applied')).toHaveLength(1);
    expect(states.filter((e) => e.state === 'no_effect')).toHaveLength(15);
    for (const e of states) expect(e.settlement_key).toBe(key);
  });
});

describe('two corrections of one captured job', () => {
  const u0 = { input_tokens: 400, output_tokens: 100 };

  async function capturedJob(world: World) {
    const job = await submitWorldJob(db.pool, world);
    await settle(db.pool, { jobId: job.id, event: { type: 'job.completed', usage: u0 } });
    return job;
  }

  function usagePair(next: () => number) {
    const draw = () => ({ input_tokens: Math.floor(next() * 3000), output_tokens: Math.floor(next() * 1200) });
    return [draw(), draw()] as const;
  }

  function correction(n: number, usage: { input_tokens: number; output_tokens: number }): LifecycleEvent {
    return { type: 'job.usage_corrected', correction: n, usage };
  }

  async function expectNetCharge(jobId: string, usage2: { input_tokens: number; output_tokens: number }) {
    const row = await jobRow(db.pool, jobId);
    expect(row.captured! + row.adjusted).toBe(billableOf(usage2));
    expect(row.highest_correction).toBe(2);
    const adjustments = (await settlementsOf(jobId)).filter((s) => s.charge_type === 'adjustment');
    expect(new Set(adjustments.map((s) => s.version)).size).toBe(adjustments.length);
  }

  it('in a forced order, both orders, 40 times: net charged = billable(correction 2), never double-counted', async () => {
    const next = random(7);
    const world = await createWorld(db.pool, { funds: RESERVATION * 200n });
    const orders = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const job = await capturedJob(world);
      const [usage1, usage2] = usagePair(next);
      const firstN = i % 2 === 0 ? 1 : 2;
      const secondN = 3 - firstN;
      const usageOf = (n: number) => (n === 1 ? usage1 : usage2);
      // Queue them on the job's lock one after the other: the first queued settles first.
      const gate = await JobGate.close(gatePool, [job.id]);
      const a = settle(db.pool, { jobId: job.id, event: correction(firstN, usageOf(firstN)) });
      await gate.waitForWaiters(1);
      const b = settle(db.pool, { jobId: job.id, event: correction(secondN, usageOf(secondN)) });
      await gate.waitForWaiters(2);
      await gate.open();
      const [ra, rb] = await Promise.all([a, b]);
      const byN = new Map<number, SettleResult>([
        [firstN, ra],
        [secondN, rb],
      ]);
      const r2 = byN.get(2)!;
      const r1 = byN.get(1)!;
      expect(r2.outcome).toBe('applied');
      if (r1.outcome === 'stale') {
        orders.add('2 then 1');
        expect(r1.reason).toBe('correction_not_newer');
        expect(r1.settlement).toBeNull();
      } else {
        orders.add('1 then 2');
        expect(r1.outcome).toBe('applied');
      }
      await expectNetCharge(job.id, usage2);
    }
    expect([...orders].sort()).toEqual(['1 then 2', '2 then 1']);
  });

  it('concurrently with Promise.all, 40 times (and each repeated): net charged = billable(correction 2)', async () => {
    const next = random(11);
    const world = await createWorld(db.pool, { funds: RESERVATION * 200n });
    const jobs = await Promise.all(Array.from({ length: 40 }, () => capturedJob(world)));
    const plans = jobs.map((job) => ({ job, usages: usagePair(next) }));
    const calls = shuffle(
      plans.flatMap(({ job, usages: [usage1, usage2] }) => [
        { job, event: correction(1, usage1) },
        { job, event: correction(2, usage2) },
        { job, event: correction(2, usage2) }, // a redelivery of N=2
        { job, event: correction(1, usage1) }, // and of N=1
      ]),
      next,
    );
    await Promise.all(calls.map(({ job, event }) => settle(db.pool, { jobId: job.id, event })));
    for (const { job, usages } of plans) await expectNetCharge(job.id, usages[1]);
  });

  it('before any completion, racing with the completion itself: net charged = billable(correction 2)', async () => {
    const next = random(13);
    const world = await createWorld(db.pool, { funds: RESERVATION * 100n });
    const plans = await Promise.all(
      Array.from({ length: 30 }, async () => ({ job: await submitWorldJob(db.pool, world), usages: usagePair(next) })),
    );
    const calls = shuffle(
      plans.flatMap(({ job, usages: [usage1, usage2] }) => [
        { job, event: { type: 'job.completed', usage: u0 } as LifecycleEvent },
        { job, event: correction(1, usage1) },
        { job, event: correction(2, usage2) },
      ]),
      next,
    );
    await Promise.all(calls.map(({ job, event }) => settle(db.pool, { jobId: job.id, event })));
    for (const { job, usages } of plans) {
      const row = await jobRow(db.pool, job.id);
      expect(row.state).toBe('captured');
      expect(row.captured! + row.adjusted).toBe(billableOf(usages[1]));
    }
  });
});

describe('a capture and a release racing for the same hold, 100 jobs', () => {
  it('exactly one wins; the loser observes the committed terminal state', async () => {
    const next = random(17);
    const world = await createWorld(db.pool, { funds: RESERVATION * 100n });
    const jobs = await Promise.all(Array.from({ length: 100 }, () => submitWorldJob(db.pool, world)));
    const usage = { input_tokens: 250, output_tokens: 50 };
    // Half race a completion against a failure (default policy: release); half a
    // completion against the cancel grace (after the tenant's cancel).
    const cancelled = jobs.slice(50);
    for (const job of cancelled) await settle(db.pool, { jobId: job.id, event: { type: 'cancel.requested' } });
    const contenders = shuffle(
      jobs.flatMap((job, i) => [
        { job, kind: 'capture' as const, event: { type: 'job.completed', usage } as LifecycleEvent },
        { job, kind: 'release' as const, event: (i < 50 ? { type: 'job.failed' } : { type: 'cancel.grace_elapsed' }) as LifecycleEvent },
      ]),
      next,
    );
    const gate = await JobGate.close(gatePool, jobs.map((j) => j.id));
    const calls = contenders.map(async (c) => ({ ...c, result: await settle(db.pool, { jobId: c.job.id, event: c.event }) }));
    await gate.waitForWaiters(16);
    await gate.open();
    const outcomes = await Promise.all(calls);

    const winners = { capture: 0, release: 0 };
    for (const job of jobs) {
      const pair = outcomes.filter((o) => o.job.id === job.id);
      const applied = pair.filter((o) => o.result.outcome === 'applied');
      expect(applied, `job ${job.id}`).toHaveLength(1);
      const winner = applied[0]!;
      const loser = pair.find((o) => o !== winner)!;
      const state = winner.kind === 'capture' ? 'captured' : 'released';
      winners[winner.kind]++;
      expect(winner.result).toMatchObject({ jobState: state, replayed: false });
      expect(loser.result).toMatchObject({ outcome: 'no_effect', jobState: state, settlement: null, replayed: false });
      expect(loser.result.reason).toBe(state === 'captured' ? 'job_already_captured' : 'job_already_released');
      if (state === 'released') expect(loser.result.alerts).toEqual(['late_success_after_release']);
      const settlements = await settlementsOf(job.id);
      expect(settlements.map((s) => s.charge_type)).toEqual([winner.kind]);
      expect(await jobRow(db.pool, job.id)).toMatchObject({ state });
    }
    // Both sides won somewhere: the race was real.
    expect(winners.capture).toBeGreaterThan(0);
    expect(winners.release).toBeGreaterThan(0);
  });
});
