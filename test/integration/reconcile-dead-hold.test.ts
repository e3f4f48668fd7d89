import { describe, expect, it } from 'vitest';
import { reconcile } from '../../src/reconcile/run.js';
import { discardDeadEvent, type DiscardedEvent } from '../../src/queue/index.js';
import { claimEvents, deadLetter, requeueDeadEvent } from '../../src/queue/index.js';
import { assertLedgerInvariants } from '../support/invariants.js';
import { backdateOpenHolds } from '../support/backdate-holds.js';
import { createWorld, databasePerTest, deliver, drain, event, expectClean, expectOnly, submitJob, type World } from '../support/reconcile-world.js';

/**
 * Issue 11.4: reconciliation reports the funds held behind each dead event, with their
 * age; a discard sets the event aside for good (and so it is no longer event_dead), and
 * a discard and a retry racing for the same dead event never both win.
 */
const scratch = databasePerTest({ max: 24 });
const db = () => scratch.current.pool;

const USAGE = { input_tokens: 300, output_tokens: 200 }; // 1800 micros of an 8000 hold

/** A job.completed accepted through intake and dead-lettered by the worker's own deadLetter(). */
async function deadCompletion(world: World, job: { id: string }): Promise<string> {
  const sent = await deliver(db(), world, event(world, job, 'job.completed', { usage: USAGE }));
  const [claim] = await claimEvents(db(), 1, 60);
  expect(claim).toMatchObject({ event_key: sent.id });
  expect(await deadLetter(db(), claim!, 'InvalidEventError: refused for good')).toBe(true);
  return sent.id;
}

async function deadEventRow(provider: string, eventKey: string) {
  const result = await db().query<{ state: string; dead_lettered_at: Date | null; discarded_by: string | null; discard_note: string | null }>(
    'select state, dead_lettered_at, discarded_by, discard_note from webhook_events where provider = $1 and event_key = $2',
    [provider, eventKey],
  );
  return result.rows[0]!;
}

describe('event_dead reports the funds held behind the dead event', () => {
  it('the hold as a decimal string with its currency, held and dead for how long; null once the hold is resolved', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    const eventKey = await deadCompletion(world, job);
    expect((await deadEventRow(world.provider.name, eventKey)).dead_lettered_at).toBeInstanceOf(Date);

    // Known ages: the hold opened an hour ago (its spend counted then too: in the first
    // hour of a UTC day that is yesterday), the event died ten minutes ago.
    await backdateOpenHolds(db(), world.tenantId, '3600 seconds');
    await db().query(`update webhook_events set dead_lettered_at = now() - interval '600 seconds' where event_key = $1`, [eventKey]);

    const [found] = expectOnly(await reconcile(db()), 'event_dead');
    expect(found!.objects).toEqual({ provider: world.provider.name, event_key: eventKey, job_id: job.id });
    expect(found!.detail).toMatchObject({
      attempts: 1,
      last_error: 'InvalidEventError: refused for good',
      held: { amount: '0.008000', currency: 'USD', wallet_id: world.wallet.id },
    });
    const detail = found!.detail as { dead_for_seconds: number; held: { held_for_seconds: number } };
    expect(detail.dead_for_seconds).toBeGreaterThanOrEqual(600);
    expect(detail.dead_for_seconds).toBeLessThan(660);
    expect(detail.held.held_for_seconds).toBeGreaterThanOrEqual(3600);
    expect(detail.held.held_for_seconds).toBeLessThan(3660);

    // A late completion dead on a job already captured holds nothing.
    const captured = await submitJob(db(), world);
    await deliver(db(), world, event(world, captured, 'job.completed', { usage: USAGE }));
    await drain(db());
    const late = await deadCompletion(world, captured);
    const run = await reconcile(db());
    const lateFound = run.exceptions.find((e) => e.objects.event_key === late);
    expect(lateFound).toMatchObject({ class: 'event_dead', detail: { held: null } });
  });

  it('a discarded event is no longer event_dead; discarding it again answers the first record', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    const eventKey = await deadCompletion(world, job);
    expectOnly(await reconcile(db()), 'event_dead');

    const first = await discardDeadEvent(db(), { provider: world.provider.name, eventKey, by: 'admin', note: 'bogus completion' });
    expect(first).toMatchObject({ provider: world.provider.name, event_key: eventKey, job_id: job.id, state: 'discarded', discarded_by: 'admin', discard_note: 'bogus completion' });
    const again = await discardDeadEvent(db(), { provider: world.provider.name, eventKey, by: 'cli:someone', note: 'another reason' });
    expect(again).toEqual(first);

    const run = await reconcile(db());
    expectClean(run);
    expect(await requeueDeadEvent(db(), world.provider.name, eventKey)).toBe('not_dead');
    expect(await discardDeadEvent(db(), { provider: world.provider.name, eventKey: 'no-such-event', by: 'admin', note: 'x' })).toBe('not_found');
    await assertLedgerInvariants(db());
  });

  it('the database refuses a discarded event without who and why (the backstop behind the route)', async () => {
    const world = await createWorld(db(), { funds: 100_000n });
    const job = await submitJob(db(), world);
    const eventKey = await deadCompletion(world, job);
    await expect(db().query(`update webhook_events set state = 'discarded' where event_key = $1`, [eventKey])).rejects.toMatchObject({
      constraint: 'webhook_events_discard_recorded',
    });
    await expect(
      db().query(`update webhook_events set state = 'discarded', discarded_by = 'admin', discarded_at = now(), discard_note = '' where event_key = $1`, [eventKey]),
    ).rejects.toMatchObject({ constraint: 'webhook_events_discard_recorded' });
    expect((await deadEventRow(world.provider.name, eventKey)).state).toBe('dead');
  });
});

describe('a discard racing a retry of the same dead event', () => {
  it('exactly one of them wins, every time', async () => {
    const world = await createWorld(db(), { funds: 1_000_000n });
    const eventKeys: string[] = [];
    for (let i = 0; i < 10; i++) eventKeys.push(await deadCompletion(world, await submitJob(db(), world)));

    const outcomes = await Promise.all(
      eventKeys.map(async (eventKey) => {
        const [discarded, retried] = await Promise.all([
          discardDeadEvent(db(), { provider: world.provider.name, eventKey, by: 'admin', note: 'race' }),
          requeueDeadEvent(db(), world.provider.name, eventKey),
        ]);
        return { eventKey, discarded, retried };
      }),
    );
    for (const { eventKey, discarded, retried } of outcomes) {
      const row = await deadEventRow(world.provider.name, eventKey);
      if (retried === 'queued') {
        expect(discarded, eventKey).toBe('not_dead');
        expect(row).toMatchObject({ state: 'pending', discarded_by: null, discard_note: null });
      } else {
        expect(retried, eventKey).toBe('not_dead');
        expect((discarded as DiscardedEvent).state).toBe('discarded');
        expect(row).toMatchObject({ state: 'discarded', discarded_by: 'admin', discard_note: 'race' });
      }
    }
  });
});
