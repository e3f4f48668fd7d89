import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { formatAmount, parseAmount } from '../../src/money/index.js';
import { freshDatabase } from '../support/database.js';
import { runTally, startServer, waitUntil } from '../support/server.js';
import { Client, deliver, signDelivery } from '../support/client.js';
import { createWorld, submitJob } from '../support/world.js';
import { expectLedgerConsistent, jobView, providerEvent, send, settledJob, settlementRows, walletOf } from '../support/jobs.js';

/**
 * CONTRACT "Job states and events": the tenant's cancel keeps the hold until the
 * provider's terminal event or the provider's cancel grace; an accepted event wins
 * over the grace; a hold is resolved once, capture or release, never both.
 */
const db = await freshDatabase();
const server = await startServer(db.url, { workers: 2 });
const admin = new Client(server.url);

// A database of its own for the test that needs nothing to settle until it says so:
// a server with no workers, a duty-only worker (--concurrency 0), later a real one.
const own = await freshDatabase();
const quiet = await startServer(own.url, { workers: 0 });
const quietAdmin = new Client(quiet.url);

const USAGE = { input_tokens: 1200, output_tokens: 340 }; // 0.001880 of a 0.020000 hold
const GRACE_SECONDS = 1;

afterAll(async () => {
  await expectLedgerConsistent(db.pool);
});

describe('API cancel', () => {
  it('20 cancels racing 20 completions: each hold is captured or released, never both', async () => {
    const world = await createWorld(admin, { credit: '10.00', policies: { cancel_grace_seconds: GRACE_SECONDS } });
    const jobs = await Promise.all(Array.from({ length: 20 }, () => submitJob(world)));

    // All 40 requests in flight together. For half of the jobs the cancel leaves as
    // soon as the completion is accepted, so that it meets the worker settling it
    // at the job's lock; for the other half both leave at once.
    const pairs = await Promise.all(
      jobs.map(async (job, i) => {
        const cancel = () => world.tenant.post(`/v1/jobs/${job.id}/cancel`);
        const completion = deliver(server.url, world.provider, signDelivery(providerEvent(world, job.id, 'job.completed', { usage: USAGE })));
        const [delivered, canceled] = i % 2 === 0 ? await Promise.all([completion, cancel()]) : [await completion, await cancel()];
        return { delivered, canceled };
      }),
    );
    for (const { delivered, canceled } of pairs) {
      expect(delivered.status, JSON.stringify(delivered.body)).toBe(200);
      expect(delivered.body.status).toBe('accepted');
      if (canceled.status === 409) expect(canceled.body.error.code).toBe('job_terminal');
      else expect(canceled.status, JSON.stringify(canceled.body)).toBe(202);
    }

    const ids = jobs.map((j) => j.id);
    await waitUntil(async () => {
      const open = await db.pool.query(
        `select 1 from jobs j where j.id = any($1::uuid[])
         and (j.state not in ('captured', 'released') or exists (
           select 1 from webhook_events e where e.job_id = j.id and e.state in ('pending', 'processing')))`,
        [ids],
      );
      return open.rowCount === 0;
    });

    // The table itself: one resolving settlement per job, of the kind its state says.
    const resolutions = await db.pool.query<{ job_id: string; state: string; kinds: string[]; completion_first: boolean }>(
      `select j.id as job_id, j.state, array_agg(s.charge_type order by s.charge_type) as kinds,
              -- accepted before the grace could have passed: the completion must win
              bool_and(e.received_at < coalesce(j.cancel_requested_at, 'infinity') + make_interval(secs => $2)) as completion_first
       from jobs j
       join settlements s on s.job_id = j.id and s.charge_type in ('capture', 'release')
       join webhook_events e on e.job_id = j.id and e.type = 'job.completed'
       where j.id = any($1::uuid[]) group by j.id, j.state`,
      [ids, GRACE_SECONDS],
    );
    expect(resolutions.rows).toHaveLength(20);
    let captures = 0;
    for (const row of resolutions.rows) {
      expect(row.kinds, `job ${row.job_id}`).toHaveLength(1);
      expect(row.kinds[0], `job ${row.job_id}`).toBe(row.state === 'captured' ? 'capture' : 'release');
      if (row.completion_first) expect(row.state, `job ${row.job_id}: its completion was accepted within the grace`).toBe('captured');
      if (row.state === 'captured') captures++;
    }
    const holds = await db.pool.query(
      `select h.job_id from holds h left join settlements s on s.settlement_key = h.resolved_by
       where h.job_id = any($1::uuid[]) and (s.id is null or s.job_id <> h.job_id)`,
      [ids],
    );
    expect(holds.rows, 'holds resolved by their own settlement').toEqual([]);

    for (const job of jobs) {
      const view = await jobView(world, job.id);
      const resolved = parseAmount(view.captured, { allowZero: true }) + parseAmount(view.released, { allowZero: true });
      expect(formatAmount(resolved), `job ${job.id}: captured + released = reserved`).toBe(view.reserved);
      expect(view.settlements).toHaveLength(1);
      // the completion charged the job, or came after the grace's release and did nothing
      expect(view.events.map((e) => e.state)).toEqual([view.state === 'captured' ? 'applied' : 'no_effect']);
    }
    const balance = parseAmount('10.00') - BigInt(captures) * 1880n;
    expect(await walletOf(world)).toMatchObject({ balance: formatAmount(balance), reserved: '0.000000' });
  });

  it('a cancel with no provider event releases the hold once the grace has passed', async () => {
    // A grace longer than the duty's 2 s interval: a release that did not wait for it
    // would come at the first duty run, before the grace ends.
    const grace = 3;
    const world = await createWorld(admin, { credit: '10.00', policies: { cancel_grace_seconds: grace } });
    const job = await submitJob(world);

    const cancel = await world.tenant.post(`/v1/jobs/${job.id}/cancel`);
    expect(cancel.status).toBe(202);
    expect(cancel.body).toMatchObject({ id: job.id, state: 'cancel_requested', reserved: '0.020000' });
    const again = await world.tenant.post(`/v1/jobs/${job.id}/cancel`);
    expect(again.status).toBe(202);
    expect(again.body.state).toBe('cancel_requested');
    // The hold stays while the grace runs.
    expect(await walletOf(world)).toMatchObject({ reserved: '0.020000', available: '9.980000' });

    const view = await settledJob(world, job.id, 'released', { timeoutMs: 15_000 });
    expect(view).toMatchObject({ captured: '0.000000', released: '0.020000', adjusted: '0.000000' });
    expect(view.settlements).toHaveLength(1);
    expect(view.settlements[0]).toMatchObject({ charge_type: 'release', amount: '0.020000', reason: 'cancel_grace_elapsed' });
    const timing = await db.pool.query<{ after_grace: boolean }>(
      `select s.created_at >= j.cancel_requested_at + make_interval(secs => $2) as after_grace
       from settlements s join jobs j on j.id = s.job_id where s.job_id = $1`,
      [job.id, grace],
    );
    expect(timing.rows).toEqual([{ after_grace: true }]);
    expect(await walletOf(world)).toMatchObject({ balance: '10.000000', reserved: '0.000000', available: '10.000000' });

    const late = await world.tenant.post(`/v1/jobs/${job.id}/cancel`);
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('job_terminal');
  });

  it('a completion accepted during cancel_requested is captured, even when the grace passes before it settles', async () => {
    const duties = runTally(['worker', '--concurrency', '0'], { DATABASE_URL: own.url });
    onTestFinished(() => void duties.stop('SIGKILL'));

    const world = await createWorld(quietAdmin, { credit: '10.00', policies: { cancel_grace_seconds: GRACE_SECONDS } });
    const job = await submitJob(world);
    const cancel = await world.tenant.post(`/v1/jobs/${job.id}/cancel`);
    expect(cancel.status).toBe(202);
    expect(cancel.body.state).toBe('cancel_requested');
    const completed = `msg_${randomUUID()}`;
    await send(quiet.url, world, providerEvent(world, job.id, 'job.completed', { usage: USAGE }), completed);

    // Wait for a cancel-grace run that started after the grace had passed, and then
    // for the next one (one worker runs its duties one after another, so the first
    // has finished).
    const dutyAfterGrace = async () =>
      (
        await own.pool.query<{ last_run_at: Date; due: boolean }>(
          `select d.last_run_at, d.last_run_at >= j.cancel_requested_at + make_interval(secs => $2) as due
           from duties d, jobs j where d.name = 'cancel_grace' and j.id = $1`,
          [job.id, GRACE_SECONDS],
        )
      ).rows[0]!;
    let firstRun: Date | null = null;
    await waitUntil(async () => {
      const run = await dutyAfterGrace();
      if (run.due && firstRun === null) firstRun = run.last_run_at;
      return firstRun !== null && run.last_run_at > firstRun;
    }, 15_000);

    const waiting = await jobView(world, job.id);
    expect(waiting).toMatchObject({ state: 'cancel_requested', reserved: '0.020000', settlements: [] });
    expect(waiting.events.map((e) => [e.event_key, e.state])).toEqual([[completed, 'pending']]);

    const worker = runTally(['worker', '--concurrency', '2'], { DATABASE_URL: own.url });
    onTestFinished(() => void worker.stop('SIGKILL'));
    const view = await settledJob(world, job.id, 'captured', { events: 1 });
    expect(view).toMatchObject({ captured: '0.001880', released: '0.018120' });
    expect(view.settlements.map((s) => [s.charge_type, s.amount])).toEqual([['capture', '0.001880']]);
    expect(view.events.map((e) => [e.event_key, e.state, e.reason])).toEqual([[completed, 'applied', null]]);
    expect(await settlementRows(own.pool, job.id)).toEqual([{ charge_type: 'capture', version: 1, amount: 1880n }]);
    expect(await walletOf(world)).toMatchObject({ balance: '9.998120', reserved: '0.000000' });

    expect(await worker.stop('SIGTERM')).toBe(0);
    expect(await duties.stop('SIGTERM')).toBe(0);
    await expectLedgerConsistent(own.pool);
  });
});
