import { randomUUID } from 'node:crypto';
import { userInfo } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { refuseCapturesOnDemand } from '../support/refused-captures.js';
import { runTally, startServer, waitUntil } from '../support/server.js';
import { Client } from '../support/client.js';
import { createWorld, submitJob, type World } from '../support/world.js';
import { expectLedgerConsistent, jobView, providerEvent, send, settledJob, walletOf } from '../support/jobs.js';

/**
 * Issue 11.4, "no hold stuck forever": a dead-lettered event whose error is permanent
 * kept its job's hold open for good — a retry re-queues it into the same error, and the
 * cancel grace and the expired-hold repair yield to it. An operator's discard (HTTP and
 * CLI) sets it aside with who and why, and the normal keyed release then runs.
 * Reconciliation reports the funds held behind each dead event, with their age.
 *
 * Against a real `tally serve --workers 0`, one real `tally worker` (which runs the
 * duties) and the real `tally reconcile` / `tally discard` commands.
 */
const db = await freshDatabase();
const server = await startServer(db.url, { workers: 0 });
const admin = new Client(server.url);

// Every failure is final at once: one attempt, then the dead letter.
const CLI_ENV = { DATABASE_URL: db.url, TALLY_MAX_ATTEMPTS: '1' };
const worker = runTally(['worker', '--concurrency', '2'], { ...CLI_ENV, TALLY_POLL_INTERVAL_MS: '100', TALLY_RECONCILE_INTERVAL_SECONDS: '0' });
afterAll(() => worker.stop('SIGKILL'));

// A permanent error, as a real PostgreSQL failure: the capture of a listed job is
// refused on every attempt. Its release is not, so a release can still resolve the hold.
const refusals = await refuseCapturesOnDemand(db.pool);

const USAGE = { input_tokens: 1200, output_tokens: 340 }; // 0.001880 of a 0.020000 hold
const HOLD = '0.020000';

/** A job whose completion is dead-lettered with a permanent error; its hold stays open. */
async function jobWithDeadCompletion(world: World): Promise<{ jobId: string; eventKey: string }> {
  const job = await submitJob(world);
  expect(job.reserved).toBe(HOLD);
  await refusals.refuse(job.id);
  const eventKey = `msg_${randomUUID()}`;
  await send(server.url, world, providerEvent(world, job.id, 'job.completed', { usage: USAGE }), eventKey);
  const view = await settledJob(world, job.id, 'reserved', { events: 1 });
  expect(view.events[0]).toMatchObject({ event_key: eventKey, state: 'dead', attempts: 1 });
  const operatorView = await admin.get(`/v1/jobs/${job.id}`);
  expect(operatorView.body.events[0].last_error).toContain('refused for good');
  return { jobId: job.id, eventKey };
}

/** A job captured normally: an event that is settled, not dead. */
async function capturedJob(world: World): Promise<{ jobId: string; eventKey: string }> {
  const job = await submitJob(world);
  const eventKey = `msg_${randomUUID()}`;
  await send(server.url, world, providerEvent(world, job.id, 'job.completed', { usage: USAGE }), eventKey);
  await settledJob(world, job.id, 'captured', { events: 1 });
  return { jobId: job.id, eventKey };
}

async function holdResolvedBy(jobId: string): Promise<string | null> {
  const result = await db.pool.query<{ resolved_by: string | null }>('select resolved_by from holds where job_id = $1', [jobId]);
  return result.rows[0]!.resolved_by;
}

/** Waits until a whole run of the cancel-grace duty began after `due` and finished. */
async function cancelGraceDutyRanAfter(due: Date): Promise<void> {
  const lastRun = async () =>
    (await db.pool.query<{ last_run_at: Date }>(`select last_run_at from duties where name = 'cancel_grace'`)).rows[0]?.last_run_at ?? null;
  let started: Date | null = null;
  await waitUntil(async () => {
    started = await lastRun();
    return started !== null && started > due;
  });
  // The worker runs its duties one after another: the next claim of the duty comes only
  // after the run that began after `due` has finished.
  await waitUntil(async () => (await lastRun())!.getTime() > started!.getTime());
}

interface CliRun {
  code: number | string;
  output: string;
}

async function tally(args: string[]): Promise<CliRun> {
  const proc = runTally(args, CLI_ENV);
  const code = await proc.exited;
  return { code, output: proc.output() };
}

/** `tally reconcile --json [...]`: the run it printed. */
async function reconcileRun(extra: string[] = []): Promise<{ code: number | string; run: any }> {
  const { code, output } = await tally(['reconcile', '--json', ...extra]);
  const json = output.slice(output.indexOf('{'), output.lastIndexOf('}') + 1);
  return { code, run: JSON.parse(json) };
}

function deadEventException(run: any, provider: string, eventKey: string): any {
  return run.exceptions.find((e: any) => e.class === 'event_dead' && e.objects.provider === provider && e.objects.event_key === eventKey);
}

describe('a cancelled job whose completion is dead with a permanent error', () => {
  it('keeps its hold past the cancel grace; after `tally discard` the grace releases it and reserved returns to 0', async () => {
    const world = await createWorld(admin, { credit: '10.00', policies: { cancel_grace_seconds: 1 } });
    const { jobId, eventKey } = await jobWithDeadCompletion(world);

    // The retry route only re-queues it into the same error.
    const retry = await admin.post(`/v1/events/${world.provider}/${eventKey}/retry`);
    expect(retry.status).toBe(202);
    await waitUntil(async () => (await jobView(world, jobId)).events[0]!.state === 'dead');

    // The tenant cancels; the grace passes, and the duty yields to the dead event.
    const cancel = await world.tenant.post(`/v1/jobs/${jobId}/cancel`);
    expect(cancel.status).toBe(202);
    const due = (await db.pool.query<{ due: Date }>(`select cancel_requested_at + interval '1 second' as due from jobs where id = $1`, [jobId])).rows[0]!.due;
    await cancelGraceDutyRanAfter(due);
    expect(await jobView(world, jobId)).toMatchObject({ state: 'cancel_requested', reserved: HOLD, released: '0.000000' });
    expect(await holdResolvedBy(jobId)).toBeNull();
    expect(await walletOf(world)).toEqual(expect.objectContaining({ balance: '10.000000', reserved: HOLD, available: '9.980000' }));

    // Reconciliation names the funds held behind the dead event, and how long.
    const before = await reconcileRun();
    expect(before.code).toBe(1);
    const dead = deadEventException(before.run, world.provider, eventKey);
    expect(dead, JSON.stringify(before.run.exceptions)).toBeDefined();
    expect(dead.objects).toEqual({ provider: world.provider, event_key: eventKey, job_id: jobId });
    expect(dead.detail.held).toMatchObject({ amount: HOLD, currency: 'USD', wallet_id: world.walletId });
    // The grace (1 s) passed after the hold was opened and after the event died.
    expect(dead.detail.held.held_for_seconds).toBeGreaterThanOrEqual(1);
    expect(dead.detail.dead_for_seconds).toBeGreaterThanOrEqual(1);
    expect(Date.parse(dead.detail.dead_lettered_at)).toBeLessThan(due.getTime());

    // The CLI refuses a discard without a reason, and an unknown event.
    const noNote = await tally(['discard', world.provider, eventKey]);
    expect(noNote.code).toBe(1);
    expect(noNote.output).toContain('--note');
    const blankNote = await tally(['discard', world.provider, eventKey, '--note', '   ']);
    expect(blankNote.code).toBe(1);
    expect(blankNote.output).toContain('note');
    const unknown = await tally(['discard', world.provider, `msg_${randomUUID()}`, '--note', 'no such event']);
    expect(unknown.code).toBe(1);
    expect(unknown.output).toContain('no event');
    expect((await jobView(world, jobId)).events[0]!.state).toBe('dead');

    const note = 'the provider confirmed the job never ran; the completion is bogus';
    const discarded = await tally(['discard', world.provider, eventKey, '--note', note, '--json']);
    expect(discarded.code, discarded.output).toBe(0);
    const record = JSON.parse(discarded.output.slice(discarded.output.indexOf('{'), discarded.output.lastIndexOf('}') + 1));
    expect(record).toMatchObject({ provider: world.provider, event_key: eventKey, job_id: jobId, state: 'discarded', discarded_by: `cli:${userInfo().username}`, discard_note: note });

    // The cancel grace now releases the hold with its keyed release.
    const released = await settledJob(world, jobId, 'released', { events: 1 });
    expect(released).toMatchObject({ reserved: HOLD, captured: '0.000000', released: HOLD });
    expect(released.settlements.map((s) => [s.charge_type, s.version, s.amount])).toEqual([['release', 1, HOLD]]);
    expect(released.events[0]).toMatchObject({ event_key: eventKey, state: 'discarded' });
    // Who and why: the operator's job view shows it; the tenant's does not.
    expect(released.events[0]).not.toHaveProperty('discard_note');
    const operatorView = await admin.get(`/v1/jobs/${jobId}`);
    expect(operatorView.body.events[0]).toMatchObject({ state: 'discarded', discarded_by: `cli:${userInfo().username}`, discard_note: note });
    expect(await holdResolvedBy(jobId)).toBe(`${world.tenantId}:${jobId}:release:1`);
    expect(await walletOf(world)).toEqual(expect.objectContaining({ balance: '10.000000', reserved: '0.000000', available: '10.000000' }));

    // Discarded is for good: no retry; a second discard answers the first record.
    const retryDiscarded = await admin.post(`/v1/events/${world.provider}/${eventKey}/retry`);
    expect(retryDiscarded.status).toBe(409);
    expect(retryDiscarded.body.error.code).toBe('event_not_dead');
    const again = await admin.post(`/v1/events/${world.provider}/${eventKey}/discard`, { note: 'a second opinion' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...record, discarded_at: new Date(record.discarded_at).toISOString() });

    const after = await reconcileRun();
    expect(deadEventException(after.run, world.provider, eventKey)).toBeUndefined();
    expect(after.run.exceptions).toEqual([]);
    expect(after.code).toBe(0);
    await expectLedgerConsistent(db.pool);
  });
});

describe('an expired hold behind a dead completion', () => {
  it('is not released by `reconcile --repair` until an operator discards the event over HTTP; then it is', async () => {
    const world = await createWorld(admin, { credit: '10.00', policies: { hold_ttl_seconds: 2 } });
    const { jobId, eventKey } = await jobWithDeadCompletion(world);
    const fine = await capturedJob(world);

    // The hold-expiry duty flags it; the repair re-drives the event into the same error
    // and leaves the hold open behind it.
    await waitUntil(async () => (await jobView(world, jobId)).alerts.includes('hold_open_past_expiry'), 20_000);
    const stuck = await reconcileRun(['--repair']);
    expect(stuck.code).toBe(1);
    expect(stuck.run.repairs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ class: 'hold_open_past_expiry', action: 'release_hold', result: expect.stringMatching(/^skipped: an event of the job is dead/) }),
      ]),
    );
    expect(stuck.run.exceptions.map((e: any) => e.class).sort()).toEqual(['event_dead', 'hold_open_past_expiry']);
    const dead = deadEventException(stuck.run, world.provider, eventKey);
    expect(dead.detail.held).toMatchObject({ amount: HOLD, currency: 'USD' });
    expect(dead.detail.held.held_for_seconds).toBeGreaterThanOrEqual(2);
    expect(dead.detail.dead_for_seconds).toBeGreaterThanOrEqual(0);
    expect(await jobView(world, jobId)).toMatchObject({ state: 'reserved', released: '0.000000' });
    expect(await holdResolvedBy(jobId)).toBeNull();

    // Refusals store nothing: the event stays dead.
    const path = `/v1/events/${world.provider}/${eventKey}/discard`;
    for (const body of [{}, { note: '' }, { note: ' \n\t ' }, { note: 'x'.repeat(2001) }, { note: 42 }]) {
      const refused = await admin.post(path, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error.code).toBe('invalid_request');
    }
    const noBody = await admin.request('POST', path);
    expect(noBody.status).toBe(400);
    expect((await admin.as(null).post(path, { note: 'who am I' })).status).toBe(401);
    const byTenant = await world.tenant.post(path, { note: 'not mine to discard' });
    expect(byTenant.status).toBe(403);
    expect(byTenant.body.error.code).toBe('forbidden');
    const unknown = await admin.post(`/v1/events/${world.provider}/msg_${randomUUID()}/discard`, { note: 'no such event' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    const notDead = await admin.post(`/v1/events/${world.provider}/${fine.eventKey}/discard`, { note: 'it settled' });
    expect(notDead.status).toBe(409);
    expect(notDead.body.error.code).toBe('event_not_dead');
    expect((await jobView(world, jobId)).events[0]!.state).toBe('dead');
    expect((await jobView(world, fine.jobId)).events[0]!.state).toBe('applied');

    const note = 'x'.repeat(1990) + ' permanent';
    const discarded = await admin.post(path, { note });
    expect(discarded.status, JSON.stringify(discarded.body)).toBe(200);
    expect(discarded.body).toEqual({
      provider: world.provider,
      event_key: eventKey,
      job_id: jobId,
      state: 'discarded',
      discarded_by: 'admin',
      discarded_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      discard_note: note,
    });
    const again = await admin.post(path, { note: 'changed my mind' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(discarded.body);

    // Now the expired hold's keyed release runs, and the run is clean.
    const repaired = await reconcileRun(['--repair']);
    expect(repaired.run.repairs).toEqual(
      expect.arrayContaining([expect.objectContaining({ class: 'hold_open_past_expiry', action: 'release_hold', result: 'hold_expired' })]),
    );
    expect(repaired.run.repairs.filter((r: any) => r.class === 'event_dead')).toEqual([]);
    expect(repaired.run.exceptions).toEqual([]);
    expect(repaired.code).toBe(0);
    expect(await jobView(world, jobId)).toMatchObject({ state: 'released', released: HOLD, events: [expect.objectContaining({ state: 'discarded' })] });
    expect(await holdResolvedBy(jobId)).toBe(`${world.tenantId}:${jobId}:release:1`);
    expect(await walletOf(world)).toEqual(expect.objectContaining({ balance: '9.998120', reserved: '0.000000', available: '9.998120' }));

    const retry = await admin.post(`/v1/events/${world.provider}/${eventKey}/retry`);
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('event_not_dead');
    await expectLedgerConsistent(db.pool);
  });
});
