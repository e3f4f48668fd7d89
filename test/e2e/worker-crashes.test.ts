import { randomUUID } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { PoolClient } from '../../src/db/pool.js';
import { formatAmount, parseAmount } from '../../src/money/index.js';
import { freshDatabase } from '../support/database.js';
import { runTally, startServer, waitUntil, type TallyProcess } from '../support/server.js';
import { Client, deliver, signDelivery } from '../support/client.js';
import { createWorld, submitJob, type World } from '../support/world.js';
import { entryRows, expectLedgerConsistent, jobView, providerEvent, send, settledJob, settlementRows, walletOf } from '../support/jobs.js';

/**
 * Workers that stall, die or fail, against a real `tally serve --workers 0` and
 * standalone `tally worker` processes (docs/ARCHITECTURE.md "Workers"): claims with a lease and a
 * fencing token, retries, dead letters and operator re-drive, graceful stop.
 */
const db = await freshDatabase();
const server = await startServer(db.url, { workers: 0 });
const admin = new Client(server.url);

// For the graceful stop of `tally serve`: a server with an in-process worker, on a
// database of its own so that its worker settles nothing of the other tests.
const serveDb = await freshDatabase();
const stoppable = await startServer(serveDb.url, { workers: 1 });

const USAGE = { input_tokens: 1200, output_tokens: 340 }; // 0.001880 of a 0.020000 hold

/** A standalone `tally worker`, killed after the test whatever happens. */
function startWorker(env: Record<string, string | undefined> = {}, concurrency = 1): TallyProcess {
  const worker = runTally(['worker', '--concurrency', String(concurrency)], {
    DATABASE_URL: db.url,
    TALLY_FAILPOINTS: undefined,
    TALLY_POLL_INTERVAL_MS: '100',
    ...env,
  });
  onTestFinished(() => {
    if (worker.child.exitCode === null && worker.child.signalCode === null) {
      worker.child.kill('SIGCONT');
      worker.child.kill('SIGKILL');
    }
  });
  return worker;
}

/** Holds row locks on jobs from a transaction of the test's own until `release()`. */
async function lockJobs(jobIds: string[], mode: 'for update' | 'for key share', pool = db.pool): Promise<{ release(): Promise<void> }> {
  const client: PoolClient = await pool.connect();
  await client.query('begin');
  await client.query(`select id from jobs where id = any($1::uuid[]) order by id ${mode}`, [jobIds]);
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await client.query('commit');
    client.release();
  };
  onTestFinished(release);
  return { release };
}

/** Backends of this database that wait on a lock while running `queryLike`. */
async function lockWaiters(applicationName: string, queryLike = '%', pool = db.pool): Promise<number[]> {
  const result = await pool.query<{ pid: number }>(
    `select pid from pg_stat_activity
     where datname = current_database() and application_name = $1 and wait_event_type = 'Lock' and query like $2`,
    [applicationName, queryLike],
  );
  return result.rows.map((r) => r.pid);
}

/** The job row lock of settle (jobs/rows.ts lockJob). */
const LOCK_JOB_QUERY = '%for update of j%';

async function eventRow(provider: string, eventKey: string) {
  const result = await db.pool.query<{
    state: string;
    reason: string | null;
    fencing_token: bigint;
    attempts: number;
    settlement_key: string | null;
    lease_until: Date | null;
    expired: boolean;
  }>(
    `select state, reason, fencing_token, attempts, settlement_key, lease_until, coalesce(lease_until < now(), false) as expired
     from webhook_events where provider = $1 and event_key = $2`,
    [provider, eventKey],
  );
  return result.rows[0]!;
}

async function completeJobs(world: World, count: number): Promise<{ jobIds: string[]; eventKeys: string[] }> {
  const jobs = await Promise.all(Array.from({ length: count }, () => submitJob(world)));
  const eventKeys: string[] = [];
  for (const job of jobs) {
    const key = `msg_${randomUUID()}`;
    await send(server.url, world, providerEvent(world, job.id, 'job.completed', { usage: USAGE }), key);
    eventKeys.push(key);
  }
  return { jobIds: jobs.map((j) => j.id), eventKeys };
}

/** Exactly one capture of 0.001880 per job, with exactly its three entries. */
async function expectCapturedOnce(world: World, jobIds: string[]): Promise<void> {
  for (const jobId of jobIds) {
    expect(await settlementRows(db.pool, jobId), `job ${jobId}`).toEqual([{ charge_type: 'capture', version: 1, amount: 1880n }]);
    const entries = await entryRows(db.pool, jobId);
    expect(entries.map((e) => [e.entry_type, e.amount]).sort(), `job ${jobId}`).toEqual([
      ['capture', 1880n],
      ['release_remainder', 18120n],
      ['reserve', 20000n],
    ]);
    const view = await jobView(world, jobId);
    expect(view).toMatchObject({ state: 'captured', captured: '0.001880', released: '0.018120' });
  }
}

function balanceAfter(credit: string, captures: number): string {
  return formatAmount(parseAmount(credit) - BigInt(captures) * 1880n);
}

describe('a worker whose lease expired', () => {
  it("stalled inside settle past its lease, it cannot overwrite the new owner's result", async () => {
    const world = await createWorld(admin, { credit: '10.00' });
    const job = await submitJob(world);
    const key = `msg_${randomUUID()}`;

    // The test holds the job row (KEY SHARE lets intake number the event, but not
    // settle's FOR UPDATE): worker A claims the event and blocks inside settle.
    const gate = await lockJobs([job.id], 'for key share');
    await send(server.url, world, providerEvent(world, job.id, 'job.completed', { usage: USAGE }), key);
    // A leased claim (TALLY_SETTLE_CLAIM): what is tested is a lease running out under it.
    const a = startWorker({ TALLY_LEASE_SECONDS: '2', TALLY_SETTLE_CLAIM: 'leased' });
    const aPid = a.child.pid!;

    // A's statement timeout is a third of its lease: should it fire before A is
    // stopped, A retries the event and blocks again — stop it while it waits.
    let blocked: number[] = [];
    for (let tries = 0; blocked.length === 0; tries++) {
      expect(tries, 'worker A never stayed blocked on the job lock').toBeLessThan(10);
      await waitUntil(async () => (await lockWaiters('tally-worker', LOCK_JOB_QUERY)).length === 1, 20_000, 10);
      process.kill(aPid, 'SIGSTOP');
      blocked = await lockWaiters('tally-worker', LOCK_JOB_QUERY);
      if (blocked.length === 0) process.kill(aPid, 'SIGCONT');
    }
    const claimedByA = await eventRow(world.provider, key);
    expect(claimedByA.state).toBe('processing');

    // Let A's transaction have the lock while A is frozen, and wait out its lease.
    await gate.release();
    await waitUntil(async () => (await eventRow(world.provider, key)).expired, 10_000);

    const b = startWorker();
    await settledJob(world, job.id, 'captured', { events: 1 });
    const settledByB = await eventRow(world.provider, key);
    expect(settledByB.fencing_token).toBeGreaterThan(claimedByA.fencing_token);
    expect(settledByB).toMatchObject({ state: 'applied', reason: null, settlement_key: `${world.tenantId}:${job.id}:capture:1` });

    // A wakes up with the job row it read before B settled and tries to finish; a
    // graceful stop waits for that attempt. Its write is fenced off: the event is B's.
    process.kill(aPid, 'SIGCONT');
    expect(await stopGracefully(a)).toBe(0);
    expect(await stopGracefully(b)).toBe(0);

    const after = await eventRow(world.provider, key);
    expect(after).toMatchObject({
      state: 'applied',
      reason: null,
      fencing_token: settledByB.fencing_token,
      settlement_key: `${world.tenantId}:${job.id}:capture:1`,
    });
    await expectCapturedOnce(world, [job.id]);
    const view = await jobView(world, job.id);
    expect(view.events.map((e) => [e.event_key, e.state, e.reason])).toEqual([[key, 'applied', null]]);
    expect(await walletOf(world)).toMatchObject({ balance: '9.998120', reserved: '0.000000' });
    await expectLedgerConsistent(db.pool);
    // A did try, and was told the claim was no longer its own.
    await waitUntil(() => a.output().includes('claim lost'), 5_000);
  });
});

describe('a worker killed while it holds claims', () => {
  it('killed right after claiming: another worker settles every event after the lease, nothing twice', async () => {
    const world = await createWorld(admin, { credit: '10.00' });
    const { jobIds, eventKeys } = await completeJobs(world, 8);

    const a = startWorker({ TALLY_LEASE_SECONDS: '2', TALLY_SETTLE_CLAIM: 'leased', TALLY_FAILPOINTS: 'worker.after_claim' }, 4);
    expect(await a.exited).toBe('SIGKILL');
    const held = await db.pool.query<{ event_key: string; fencing_token: bigint }>(
      `select event_key, fencing_token from webhook_events where provider = $1 and state = 'processing'`,
      [world.provider],
    );
    expect(held.rowCount).toBeGreaterThanOrEqual(1);
    const settled = await db.pool.query('select 1 from settlements where job_id = any($1::uuid[])', [jobIds]);
    expect(settled.rowCount).toBe(0);

    const b = startWorker({}, 4);
    for (const jobId of jobIds) await settledJob(world, jobId, 'captured', { events: 1 });
    expect(await stopGracefully(b)).toBe(0);

    await expectCapturedOnce(world, jobIds);
    for (const { event_key, fencing_token } of held.rows) {
      // claimed by A, then again by B once A's lease ran out: A's lost claim is not an
      // attempt (issue 11.5), B's token replaced A's
      const row = await eventRow(world.provider, event_key);
      expect(row).toMatchObject({ state: 'applied', attempts: 1 });
      expect(row.fencing_token).toBeGreaterThan(fencing_token);
    }
    for (const key of eventKeys) expect((await eventRow(world.provider, key)).state).toBe('applied');
    expect(await walletOf(world)).toMatchObject({ balance: balanceAfter('10.00', 8), reserved: '0.000000' });
    await expectLedgerConsistent(db.pool);
  });

  it('SIGKILL in the middle of a burst: another worker finishes, nothing billed twice', async () => {
    const world = await createWorld(admin, { credit: '10.00' });
    const { jobIds } = await completeJobs(world, 40);

    const a = startWorker({ TALLY_LEASE_SECONDS: '2' }, 4);
    await waitUntil(
      async () => {
        const applied = await db.pool.query(`select 1 from webhook_events where provider = $1 and state = 'applied'`, [world.provider]);
        return (applied.rowCount ?? 0) >= 3;
      },
      20_000,
      5,
    );
    a.child.kill('SIGKILL');
    expect(await a.exited).toBe('SIGKILL');

    const b = startWorker({}, 4);
    for (const jobId of jobIds) await settledJob(world, jobId, 'captured', { events: 1 });
    expect(await stopGracefully(b)).toBe(0);

    await expectCapturedOnce(world, jobIds);
    expect(await walletOf(world)).toMatchObject({ balance: balanceAfter('10.00', 40), reserved: '0.000000' });
    await expectLedgerConsistent(db.pool);
  });
});

describe('a completion whose settlement keeps failing', () => {
  it('is dead-lettered with the hold open, then re-driven by an operator and captured once', async () => {
    const world = await createWorld(admin, { credit: '10.00' });
    const doomed = await submitJob(world);
    const fine = await submitJob(world);

    // A real PostgreSQL failure on every attempt: a trigger refusing this job's settlements.
    await db.pool.query(`
      create function refuse_test_settlement() returns trigger language plpgsql as $$
      begin
        if new.job_id = '${doomed.id}'::uuid then
          raise exception 'settlements of job % are refused by the test', new.job_id;
        end if;
        return new;
      end $$`);
    await db.pool.query(
      'create trigger refuse_test_settlement before insert on settlements for each row execute function refuse_test_settlement()',
    );
    onTestFinished(async () => {
      await db.pool.query('drop trigger if exists refuse_test_settlement on settlements');
      await db.pool.query('drop function if exists refuse_test_settlement()');
    });

    const deadKey = `msg_${randomUUID()}`;
    const fineKey = `msg_${randomUUID()}`;
    await send(server.url, world, providerEvent(world, doomed.id, 'job.completed', { usage: USAGE }), deadKey);
    await send(server.url, world, providerEvent(world, fine.id, 'job.completed', { usage: USAGE }), fineKey);
    const worker = startWorker({ TALLY_MAX_ATTEMPTS: '3' }, 2);

    const dead = await settledJob(world, doomed.id, 'reserved', { events: 1 });
    expect(dead).toMatchObject({ reserved: '0.020000', captured: '0.000000', released: '0.000000', settlements: [] });
    expect(dead.events).toHaveLength(1);
    expect(dead.events[0]).toMatchObject({ event_key: deadKey, state: 'dead', attempts: 3 });
    // The tenant sees a stable code; the error's text is the operator's.
    expect(dead.events[0]).toMatchObject({ error_code: 'settlement_failed' });
    expect(dead.events[0]).not.toHaveProperty('last_error');
    const operatorView = await new Client(server.url).get(`/v1/jobs/${doomed.id}`);
    expect(operatorView.body.events[0].last_error).toContain('refused by the test');
    await settledJob(world, fine.id, 'captured', { events: 1 });

    // Nothing dropped: the hold is open and flagged.
    const hold = await db.pool.query('select resolved_by from holds where job_id = $1', [doomed.id]);
    expect(hold.rows).toEqual([{ resolved_by: null }]);
    expect(await walletOf(world)).toMatchObject({ balance: '9.998120', reserved: '0.020000', available: '9.978120' });
    expect(await deadLetters()).toBeGreaterThanOrEqual(1);

    // Only a dead event can be retried, and only by an operator.
    const notDead = await admin.post(`/v1/events/${world.provider}/${fineKey}/retry`);
    expect(notDead.status).toBe(409);
    expect(notDead.body.error.code).toBe('event_not_dead');
    const byTenant = await world.tenant.post(`/v1/events/${world.provider}/${deadKey}/retry`);
    expect(byTenant.status).toBe(403);
    const unknown = await admin.post(`/v1/events/${world.provider}/msg_${randomUUID()}/retry`);
    expect(unknown.status).toBe(404);

    await db.pool.query('drop trigger refuse_test_settlement on settlements');
    const retry = await admin.post(`/v1/events/${world.provider}/${deadKey}/retry`);
    expect(retry.status).toBe(202);
    expect(retry.body).toEqual({ provider: world.provider, event_key: deadKey, state: 'pending' });

    const captured = await settledJob(world, doomed.id, 'captured', { events: 1 });
    expect(captured.events[0]).toMatchObject({ event_key: deadKey, state: 'applied' });
    await expectCapturedOnce(world, [doomed.id, fine.id]);
    expect(await walletOf(world)).toMatchObject({ balance: balanceAfter('10.00', 2), reserved: '0.000000' });
    expect(await deadLetters()).toBe(0);

    const again = await admin.post(`/v1/events/${world.provider}/${deadKey}/retry`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('event_not_dead');
    expect(await stopGracefully(worker)).toBe(0);
    await expectLedgerConsistent(db.pool);
  });
});

describe('SIGTERM', () => {
  it('`tally worker` finishes the event in hand, claims nothing more, and exits 0', async () => {
    const world = await createWorld(admin, { credit: '10.00' });
    const { jobIds, eventKeys } = await completeJobs(world, 5);
    // The first job's settlement will wait on the test's lock: that is the event in hand.
    const gate = await lockJobs([jobIds[0]!], 'for key share');
    // Batches of one, so that "the event in hand" is exactly one event.
    const worker = startWorker({ LOG_LEVEL: 'info', TALLY_SETTLE_BATCH_SIZE: '1' }, 1);
    await waitUntil(async () => (await lockWaiters('tally-worker', LOCK_JOB_QUERY)).length === 1);
    // Taken by a row lock in the transaction that now waits (TALLY_SETTLE_CLAIM=locked, the
    // default): still pending, with no lease; no other worker could take it meanwhile.
    expect(await eventRow(world.provider, eventKeys[0]!)).toMatchObject({ state: 'pending', attempts: 0, lease_until: null });

    worker.child.kill('SIGTERM');
    // It has begun to stop, and waits for the event in hand rather than exit.
    await waitUntil(() => worker.output().includes('stopping'));
    expect(worker.child.exitCode).toBeNull();
    expect(await lockWaiters('tally-worker', LOCK_JOB_QUERY)).toHaveLength(1);
    await gate.release();
    expect(await exitCode(worker)).toBe(0);

    // The event in hand was settled in full; the others were never claimed.
    await expectCapturedOnce(world, [jobIds[0]!]);
    expect(await eventRow(world.provider, eventKeys[0]!)).toMatchObject({ state: 'applied', attempts: 1 });
    for (const key of eventKeys.slice(1)) {
      expect(await eventRow(world.provider, key)).toMatchObject({ state: 'pending', attempts: 0, lease_until: null });
    }
    const rest = await db.pool.query('select 1 from settlements where job_id = any($1::uuid[])', [jobIds.slice(1)]);
    expect(rest.rowCount).toBe(0);

    const next = startWorker({}, 2);
    for (const jobId of jobIds) await settledJob(world, jobId, 'captured', { events: 1 });
    expect(await stopGracefully(next)).toBe(0);
    await expectCapturedOnce(world, jobIds);
    expect(await walletOf(world)).toMatchObject({ balance: balanceAfter('10.00', 5), reserved: '0.000000' });
    await expectLedgerConsistent(db.pool);
  });

  it("`tally serve` answers the request in flight, finishes its worker's event, and exits 0", async () => {
    const serveAdmin = new Client(stoppable.url);
    const world = await createWorld(serveAdmin, { credit: '10.00' });
    const inHand = await submitJob(world);
    const inFlight = await submitJob(world);
    // KEY SHARE on one job holds its settlement (the worker's event in hand); FOR
    // UPDATE on the other holds intake (the webhook request in flight).
    const settleGate = await lockJobs([inHand.id], 'for key share', serveDb.pool);
    const intakeGate = await lockJobs([inFlight.id], 'for update', serveDb.pool);

    const handKey = `msg_${randomUUID()}`;
    const flightKey = `msg_${randomUUID()}`;
    await send(stoppable.url, world, providerEvent(world, inHand.id, 'job.completed', { usage: USAGE }), handKey);
    const flight = deliver(
      stoppable.url,
      world.provider,
      signDelivery(providerEvent(world, inFlight.id, 'job.completed', { usage: USAGE }), { id: flightKey }),
    );
    await waitUntil(async () => {
      const settling = await lockWaiters('tally-serve', LOCK_JOB_QUERY, serveDb.pool);
      const receiving = await lockWaiters('tally-serve', '%set event_seq%', serveDb.pool);
      return settling.length === 1 && receiving.length === 1;
    });

    stoppable.child.kill('SIGTERM');
    await waitUntil(async () => (await fetch(`${stoppable.url}/healthz`).catch(() => null))?.status !== 200);
    await intakeGate.release();
    await settleGate.release();

    expect(await exitCode(stoppable)).toBe(0);
    const answer = await flight;
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: 'accepted', event_key: flightKey });

    // Nothing half-done: the event in hand settled, the accepted one durable, no claim left.
    const events = await serveDb.pool.query<{ event_key: string; state: string }>(
      'select event_key, state from webhook_events where provider = $1 order by seq, event_key',
      [world.provider],
    );
    const states = Object.fromEntries(events.rows.map((e) => [e.event_key, e.state]));
    expect(states[handKey]).toBe('applied');
    expect(['pending', 'applied']).toContain(states[flightKey]);
    expect(await settlementRows(serveDb.pool, inHand.id)).toEqual([{ charge_type: 'capture', version: 1, amount: 1880n }]);
    const resolved = await serveDb.pool.query('select state from jobs where id = $1', [inFlight.id]);
    expect(resolved.rows[0].state).toBe(states[flightKey] === 'applied' ? 'captured' : 'reserved');
    await expectLedgerConsistent(serveDb.pool);
  });
});

async function stopGracefully(proc: TallyProcess): Promise<number | string> {
  proc.child.kill('SIGTERM');
  return exitCode(proc);
}

/** The process's exit code, failing if it has not exited within 15 s of being asked to stop. */
async function exitCode(proc: TallyProcess): Promise<number | string> {
  await waitUntil(() => proc.child.exitCode !== null || proc.child.signalCode !== null, 15_000).catch(() => {
    throw new Error(`the process did not exit within 15 s of SIGTERM: ${proc.output()}`);
  });
  return proc.exited;
}

async function deadLetters(): Promise<number> {
  const response = await fetch(`${server.url}/metrics`);
  expect(response.status).toBe(200);
  const line = /^tally_dead_letters (\d+)$/m.exec(await response.text());
  expect(line, 'tally_dead_letters in /metrics').not.toBeNull();
  return Number(line![1]);
}
