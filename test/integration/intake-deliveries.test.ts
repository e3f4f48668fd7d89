import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { uncachedProviders } from '../../src/catalog/provider-cache.js';
import { receiveWebhook } from '../../src/intake/receive.js';
import { freshDatabase } from '../support/database.js';
import { TEST_SECRET, signDelivery, type SignedDelivery } from '../support/client.js';
import { TEST_SERVER_SECRET, createWorld, submitWorldJob } from '../support/fixtures.js';
import { jobDeliveries } from '../support/jobs.js';

/**
 * What intake writes per delivery (migration 0026): an accepted delivery only its event
 * row — the record of the delivery — and a repeat, a conflict or a mismatch one attempt
 * row each. The job view lists all of them, oldest first.
 */
const db = await freshDatabase({ max: 4 });

async function counts(eventKey: string) {
  const result = await db.pool.query<{ events: number; attempts: string[] }>(
    `select (select count(*)::int from webhook_events where event_key = $1) as events,
            array(select outcome from delivery_attempts where event_key = $1 order by received_at, id) as attempts`,
    [eventKey],
  );
  return result.rows[0]!;
}

describe('intake', () => {
  it('writes no delivery attempt for an accepted delivery, and one for each repeat, conflict and mismatch', async () => {
    const world = await createWorld(db.pool, { funds: 10_000_000n });
    await db.pool.query('update providers set secrets = $2 where name = $1', [world.provider.name, [TEST_SECRET]]);
    const job = await submitWorldJob(db.pool, world);
    const receive = (signed: SignedDelivery) =>
      receiveWebhook(db.pool, uncachedProviders(db.pool, TEST_SERVER_SECRET), world.provider.name, Buffer.from(signed.body), signed.headers);
    const eventKey = `msg_${randomUUID()}`;
    const completed = signDelivery({ type: 'job.completed', data: { job_id: job.id, usage: { input_tokens: 10 } } }, { id: eventKey });

    expect(await receive(completed)).toEqual({ status: 'accepted', eventKey });
    expect(await counts(eventKey)).toEqual({ events: 1, attempts: [] });

    // The same bytes again: a duplicate, recorded as an attempt.
    expect(await receive(completed)).toEqual({ status: 'already_accepted', eventKey });
    expect(await counts(eventKey)).toEqual({ events: 1, attempts: ['already_accepted'] });

    // Other bytes under the key: a conflict, recorded.
    const other = signDelivery({ type: 'job.completed', data: { job_id: job.id, usage: { input_tokens: 99 } } }, { id: eventKey });
    await expect(receive(other)).rejects.toMatchObject({ status: 409, code: 'event_key_conflict' });
    expect(await counts(eventKey)).toEqual({ events: 1, attempts: ['already_accepted', 'event_key_conflict'] });

    // A new key that disagrees with the job: a mismatch, recorded, no event.
    const mismatchKey = `msg_${randomUUID()}`;
    const mismatched = signDelivery(
      { type: 'job.completed', data: { job_id: job.id, model: 'not-the-model', usage: { input_tokens: 10 } } },
      { id: mismatchKey },
    );
    await expect(receive(mismatched)).rejects.toMatchObject({ status: 422, code: 'event_mismatch' });
    expect(await counts(mismatchKey)).toEqual({ events: 0, attempts: ['event_mismatch'] });

    // The job view: every delivery, the accepted one read from its event.
    expect((await jobDeliveries(db.pool, job.id)).map((d) => [d.provider, d.event_key, d.outcome])).toEqual([
      [world.provider.name, eventKey, 'accepted'],
      [world.provider.name, eventKey, 'already_accepted'],
      [world.provider.name, eventKey, 'event_key_conflict'],
      [world.provider.name, mismatchKey, 'event_mismatch'],
    ]);
  });
});
