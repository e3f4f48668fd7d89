import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConnectionLost } from '../../src/db/errors.js';
import { createPool } from '../../src/db/pool.js';
import { OutcomeUnknown } from '../../src/ledger/errors.js';
import { settle } from '../../src/ledger/settle.js';
import { settleBatch } from '../../src/ledger/settle-batch.js';
import { claimEvents, type ClaimedEvent } from '../../src/queue/index.js';
import { settleEvents } from '../../src/worker/settle-event.js';
import { freshDatabase } from '../support/database.js';
import { CommitCuttingProxy } from '../../sim/commit-cutting-proxy.js';
import { lockWaiters } from '../support/gate.js';
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
import { assertLedgerInvariants } from '../support/invariants.js';

/**
 * The connection dies around COMMIT (docs/ARCHITECTURE.md "The settle transaction"): settle() must
 * find out what happened before it writes again. The pool under test reaches
 * PostgreSQL through CommitCuttingProxy; fixtures and checks use a direct pool.
 */
const db = await freshDatabase({ max: 6 });
const proxy = await CommitCuttingProxy.start(db.url);
const proxied = createPool(proxy.urlFor(db.url), { max: 4 });
afterAll(async () => {
  await proxied.end();
  await proxy.close();
});
afterEach(async () => {
  proxy.reset();
  await assertLedgerInvariants(db.pool);
});

const usage = { input_tokens: 250, output_tokens: 125 };
const completed = { type: 'job.completed', usage } as const;

async function captureEntries(jobId: string): Promise<bigint[]> {
  const result = await db.pool.query<{ amount: bigint }>(`select amount from ledger_entries where job_id = $1 and entry_type = 'capture'`, [
    jobId,
  ]);
  return result.rows.map((r) => r.amount);
}

async function settlementIds(jobId: string): Promise<string[]> {
  const result = await db.pool.query<{ id: string }>('select id from settlements where job_id = $1', [jobId]);
  return result.rows.map((r) => r.id);
}

describe('connection lost after COMMIT was sent (the server commits)', () => {
  it('settle() reads its own settlement back and returns it: one capture, no second debit', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    proxy.arm('after');
    const result = await settle(proxied, { jobId: job.id, event: completed });
    expect(proxy.fired.map((c) => c.mode)).toEqual(['after']);
    expect(result).toMatchObject({ outcome: 'applied', replayed: false, jobState: 'captured' });
    expect(await settlementIds(job.id)).toEqual([result.settlement!.id]);
    expect(await captureEntries(job.id)).toEqual([billableOf(usage)]);
    expect((await walletRow(db.pool, world.wallet.id)).debits_posted).toBe(billableOf(usage));
    // and a later redelivery is the ordinary replay
    const again = await settle(proxied, { jobId: job.id, event: completed });
    expect(again).toMatchObject({ outcome: 'no_effect', replayed: true });
    expect(again.settlement?.id).toBe(result.settlement!.id);
  });

  it("the COMMIT still in flight when the client looks: the read-back waits for it and returns this call's settlement", async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    proxy.arm('after', { holdCommit: true });
    const pending = settle(proxied, { jobId: job.id, event: completed });
    // The client has lost its connection and now waits on the in-doubt transaction's
    // row lock; only then does the server receive the COMMIT.
    while ((await lockWaiters(db.pool)) < 1) await new Promise((resolve) => setImmediate(resolve));
    proxy.releaseCommit();
    const result = await pending;
    expect(proxy.fired).toHaveLength(1);
    expect(result).toMatchObject({ outcome: 'applied', replayed: false, jobState: 'captured' });
    expect(await settlementIds(job.id)).toEqual([result.settlement!.id]);
    expect(await captureEntries(job.id)).toEqual([billableOf(usage)]);
  });

  it('with a claimed event: the capture and the event mark are both read back', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    const claim = await insertClaimedEvent(db.pool, job, { fencingToken: 9n });
    proxy.arm('after');
    const result = await settle(proxied, { jobId: job.id, event: completed, claim });
    expect(proxy.fired).toHaveLength(1);
    expect(result).toMatchObject({ outcome: 'applied', replayed: false });
    expect(await eventRow(db.pool, claim)).toMatchObject({ state: 'applied', settlement_key: result.settlement!.settlement_key });
    expect(await captureEntries(job.id)).toEqual([billableOf(usage)]);
  });

  it('a decision with no settlement (job.started) is recognised by its event mark, not reported as LeaseLost', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    const claim = await insertClaimedEvent(db.pool, job, { type: 'job.started' });
    proxy.arm('after');
    const result = await settle(proxied, { jobId: job.id, event: { type: 'job.started' }, claim });
    expect(proxy.fired).toHaveLength(1);
    expect(result).toMatchObject({ outcome: 'applied', jobState: 'running', settlement: null });
    expect(await eventRow(db.pool, claim)).toMatchObject({ state: 'applied' });
    expect(await jobRow(db.pool, job.id)).toMatchObject({ state: 'running' });
  });

  it('an adjustment cut after COMMIT is applied once', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    await settle(db.pool, { jobId: job.id, event: completed });
    const corrected = { input_tokens: 1000, output_tokens: 200 };
    proxy.arm('after');
    const result = await settle(proxied, { jobId: job.id, event: { type: 'job.usage_corrected', correction: 1, usage: corrected } });
    expect(proxy.fired).toHaveLength(1);
    expect(result).toMatchObject({ outcome: 'applied', replayed: false });
    const row = await jobRow(db.pool, job.id);
    expect(row.captured! + row.adjusted).toBe(billableOf(corrected));
  });
});

describe('connection lost before COMMIT reached the server (it rolls back)', () => {
  it('settle() finds nothing committed, settles again, and applies exactly once', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    proxy.arm('before');
    const result = await settle(proxied, { jobId: job.id, event: completed });
    expect(proxy.fired.map((c) => c.mode)).toEqual(['before']);
    expect(result).toMatchObject({ outcome: 'applied', replayed: false, jobState: 'captured' });
    expect(await settlementIds(job.id)).toEqual([result.settlement!.id]);
    expect(await captureEntries(job.id)).toEqual([billableOf(usage)]);
  });

  it('with a claimed event: settled again under the same claim', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    const claim = await insertClaimedEvent(db.pool, job, { type: 'job.failed' });
    proxy.arm('before');
    const result = await settle(proxied, { jobId: job.id, event: { type: 'job.failed' }, claim });
    expect(proxy.fired).toHaveLength(1);
    expect(result).toMatchObject({ outcome: 'applied', jobState: 'released', replayed: false });
    expect(await eventRow(db.pool, claim)).toMatchObject({ state: 'applied', settlement_key: result.settlement!.settlement_key });
  });
});

describe('the database unreachable for the read-back', () => {
  function isUnknownOrLost(error: unknown): boolean {
    return error instanceof OutcomeUnknown || error instanceof ConnectionLost;
  }

  it('after a committed COMMIT: OutcomeUnknown (not a duplicate); once reachable, the replay returns the one capture', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    proxy.arm('after', { thenUnreachable: true });
    const error = await settle(proxied, { jobId: job.id, event: completed }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutcomeUnknown);
    expect(isUnknownOrLost(error)).toBe(true);
    // it did commit, once (wait for the in-doubt transaction: it holds the job's row lock)
    await db.pool.query('select 1 from jobs where id = $1 for share', [job.id]);
    const committed = await settlementIds(job.id);
    expect(committed).toHaveLength(1);
    proxy.reachable();
    const retried = await settle(proxied, { jobId: job.id, event: completed });
    expect(retried).toMatchObject({ outcome: 'no_effect', replayed: true });
    expect(retried.settlement?.id).toBe(committed[0]);
    expect(await captureEntries(job.id)).toEqual([billableOf(usage)]);
  });

  it('after a lost COMMIT: OutcomeUnknown; nothing was written, and the retry applies once', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    proxy.arm('before', { thenUnreachable: true });
    const error = await settle(proxied, { jobId: job.id, event: completed }).catch((e: unknown) => e);
    expect(isUnknownOrLost(error)).toBe(true);
    await db.pool.query('select 1 from jobs where id = $1 for share', [job.id]);
    expect(await settlementIds(job.id)).toEqual([]);
    expect(await jobRow(db.pool, job.id)).toMatchObject({ state: 'reserved' });
    proxy.reachable();
    const retried = await settle(proxied, { jobId: job.id, event: completed });
    expect(retried).toMatchObject({ outcome: 'applied', replayed: false });
    expect(await captureEntries(job.id)).toEqual([billableOf(usage)]);
  });

  it('unreachable from the start: ConnectionLost after bounded attempts, nothing written', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    // cut an unrelated transaction to make the proxy unreachable, then settle
    proxy.arm('before', { thenUnreachable: true });
    await proxied.query('begin; select 1;').catch(() => {});
    await proxied.query('commit').catch(() => {});
    expect(proxy.fired).toHaveLength(1);
    const error = await settle(proxied, { jobId: job.id, event: completed }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionLost);
    expect(await settlementIds(job.id)).toEqual([]);
  });
});

describe('a batch whose COMMIT answer is lost (settleBatch, issue 11.5)', () => {
  const usageOf = (i: number) => ({ input_tokens: 100 + i * 10, output_tokens: 50 + i * 5 });

  async function batchOf(world: World, count: number) {
    const jobs = [];
    for (let i = 0; i < count; i++) jobs.push(await submitWorldJob(db.pool, world));
    const claims = await Promise.all(jobs.map((job) => insertClaimedEvent(db.pool, job)));
    return jobs.map((job, i) => ({ jobId: job.id, event: { type: 'job.completed' as const, usage: usageOf(i) }, claim: claims[i]! }));
  }

  /** Pending completions as intake stores them, claimed as a worker claims them. */
  async function claimedCompletions(world: World, count: number): Promise<ClaimedEvent[]> {
    const batch = await batchOf(world, count);
    for (const [i, { claim }] of batch.entries()) {
      await db.pool.query(
        `update webhook_events set state = 'pending', lease_until = null, attempts = 0, event = $3 where provider = $1 and event_key = $2`,
        [claim.provider, claim.eventKey, JSON.stringify({ type: 'job.completed', usage: usageOf(i) })],
      );
    }
    const claims = await claimEvents(db.pool, 100, 60);
    const mine = batch.map(({ claim }) => claims.find((c) => c.event_key === claim.eventKey)!);
    expect(mine.every(Boolean)).toBe(true);
    return mine;
  }

  async function expectCapturedOnce(jobIds: string[]) {
    for (const [i, jobId] of jobIds.entries()) {
      expect(await captureEntries(jobId)).toEqual([billableOf(usageOf(i))]);
      expect(await settlementIds(jobId)).toHaveLength(1);
    }
  }

  it('cut after COMMIT: the batch reads its own writes back and returns its results', async () => {
    const world = await createWorld(db.pool, { funds: 10n * RESERVATION });
    const batch = await batchOf(world, 3);
    proxy.arm('after');
    const results = await settleBatch(proxied, batch);
    expect(proxy.fired.map((c) => c.mode)).toEqual(['after']);
    expect(results.map((r) => ({ outcome: r.outcome, replayed: r.replayed, jobState: r.jobState }))).toEqual(
      Array(3).fill({ outcome: 'applied', replayed: false, jobState: 'captured' }),
    );
    for (const [i, request] of batch.entries()) {
      expect(await settlementIds(request.jobId)).toEqual([results[i]!.settlement!.id]);
      expect(await eventRow(db.pool, request.claim)).toMatchObject({
        state: 'applied',
        settlement_key: results[i]!.settlement!.settlement_key,
      });
    }
    await expectCapturedOnce(batch.map((r) => r.jobId));
  });

  it('the COMMIT still in flight when the batch looks: the read-back waits for it', async () => {
    const world = await createWorld(db.pool, { funds: 10n * RESERVATION });
    const batch = await batchOf(world, 3);
    proxy.arm('after', { holdCommit: true });
    const pending = settleBatch(proxied, batch);
    let failed: unknown = null;
    pending.catch((error: unknown) => (failed = error));
    // The batch has lost its connection and waits on the in-doubt transaction's row
    // locks; only then does the server receive the COMMIT.
    while (failed === null && (await lockWaiters(db.pool)) < 1) await new Promise((resolve) => setImmediate(resolve));
    expect(failed).toBeNull();
    proxy.releaseCommit();
    const results = await pending;
    expect(results.map((r) => r.outcome)).toEqual(['applied', 'applied', 'applied']);
    await expectCapturedOnce(batch.map((r) => r.jobId));
  });

  it('through the worker: the events of a batch cut after COMMIT are settled, not reported as lost claims that wrote nothing', async () => {
    const world = await createWorld(db.pool, { funds: 10n * RESERVATION });
    const claims = await claimedCompletions(world, 4);
    proxy.arm('after');
    const outcomes = await settleEvents(proxied, claims);
    expect(proxy.fired).toHaveLength(1);
    expect(outcomes.map((o) => (o.kind === 'settled' ? `${o.kind}:${o.result.outcome}:${o.result.replayed}` : o.kind))).toEqual(
      Array(4).fill('settled:applied:false'),
    );
    await expectCapturedOnce(claims.map((c) => c.job_id));
  });

  it('through the worker: cut after COMMIT and the database unreachable for the read-back: OutcomeUnknown, nothing reported or written twice', async () => {
    const world = await createWorld(db.pool, { funds: 10n * RESERVATION });
    const claims = await claimedCompletions(world, 3);
    proxy.arm('after', { thenUnreachable: true });
    await expect(settleEvents(proxied, claims)).rejects.toBeInstanceOf(OutcomeUnknown);
    await db.pool.query('select 1 from jobs where id = any($1::uuid[]) for share', [claims.map((c) => c.job_id)]);
    await expectCapturedOnce(claims.map((c) => c.job_id));
    for (const claim of claims)
      expect(await eventRow(db.pool, { provider: claim.provider, eventKey: claim.event_key })).toMatchObject({ state: 'applied' });
  });

  it('through the worker: a batch cut before COMMIT is read back as not committed, and each event settles once', async () => {
    const world = await createWorld(db.pool, { funds: 10n * RESERVATION });
    const claims = await claimedCompletions(world, 4);
    proxy.arm('before');
    const outcomes = await settleEvents(proxied, claims);
    expect(proxy.fired.map((c) => c.mode)).toEqual(['before']);
    expect(outcomes.map((o) => (o.kind === 'settled' ? `${o.kind}:${o.result.outcome}` : o.kind))).toEqual(
      Array(4).fill('settled:applied'),
    );
    await expectCapturedOnce(claims.map((c) => c.job_id));
  });
});
