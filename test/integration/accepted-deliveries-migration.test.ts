import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Pool } from '../../src/db/pool.js';
import { CheckViolation, mapDatabaseError } from '../../src/db/errors.js';
import { migrate } from '../../src/db/migrate.js';
import { withTransaction } from '../../src/db/transaction.js';
import { newId } from '../../src/ids.js';
import { persistDeliveries } from '../../src/queue/index.js';
import { createWorld, submitWorldJob } from '../support/fixtures.js';
import { jobDeliveries } from '../support/jobs.js';
import { fileDatabase, migrateBefore, migrationsThrough } from '../support/older-schema.js';

/**
 * Migration 0026 (an accepted delivery is its event row, no attempt of its own) on rows
 * the code before it wrote: events of two jobs, some accepted together in one statement,
 * each with its 'accepted' attempt, and repeats, conflicts and a mismatch. After it the
 * job view lists every delivery exactly as the code before read it, the accepted attempts
 * are gone, the others are kept as they were, and none can be written again. An accepted
 * attempt with no event recording the same delivery stops it first, naming the count.
 */

const ACCEPTED_FROM_EVENTS = 26;

const pool = await fileDatabase('tally_accepted_deliveries');

type Job = { id: string; tenant_id: string; provider: string };
type Delivery = { key: string; body: string };
type Outcome = 'accepted' | 'already_accepted' | 'event_key_conflict' | 'event_mismatch';

const hash = (body: string) => createHash('sha256').update(body).digest();

/**
 * What intake's statement wrote before 0026, in one transaction (so one now()): the events
 * numbered under the job's row, each with its 'accepted' attempt, and the other attempts
 * given (ids made in that order, as intake made them).
 */
async function writeAsBefore(job: Job, events: Delivery[], attempts: { outcome: Outcome; delivery: Delivery }[] = []): Promise<void> {
  await withTransaction(pool, async (tx) => {
    for (const event of events) {
      const seq = await tx.query<{ event_seq: string }>('update jobs set event_seq = event_seq + 1 where id = $1 returning event_seq', [
        job.id,
      ]);
      await tx.query(
        `insert into webhook_events (provider, event_key, tenant_id, job_id, seq, type, payload_hash, payload, event)
         values ($1, $2, $3, $4, $5, 'job.progress', $6, $7, '{"type":"job.progress"}')`,
        [job.provider, event.key, job.tenant_id, job.id, seq.rows[0]!.event_seq, hash(event.body), Buffer.from(event.body)],
      );
    }
    const all = [...events.map((delivery) => ({ outcome: 'accepted' as Outcome, delivery })), ...attempts];
    for (const { outcome, delivery } of all) {
      await tx.query(
        `insert into delivery_attempts (id, provider, event_key, job_id, outcome, payload_hash, detail, tenant_id)
         values ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          newId(),
          job.provider,
          delivery.key,
          job.id,
          outcome,
          hash(delivery.body),
          outcome === 'event_mismatch' ? { mismatch: 'model' } : null,
          job.tenant_id,
        ],
      );
    }
  });
}

/** The job view's deliveries as the code before 0026 read them (src/jobs/view.ts then). */
async function deliveriesAsBefore(db: Pool, jobId: string) {
  const result = await db.query(
    'select provider, event_key, outcome, received_at from delivery_attempts where job_id = $1 order by received_at, id',
    [jobId],
  );
  return result.rows;
}

async function attemptsOtherThanAccepted(): Promise<string[]> {
  const result = await pool.query<{ row: string }>(
    `select to_jsonb(a)::text as row from delivery_attempts a where outcome <> 'accepted' order by id`,
  );
  return result.rows.map((r) => r.row);
}

const delivery = (body = `{"n":"${newId()}"}`): Delivery => ({ key: `evt_${newId()}`, body });

describe('migration 0026 on deliveries written before it', () => {
  it('keeps every delivery in the job view, drops only the accepted attempts, and refuses new ones', { timeout: 120_000 }, async () => {
    await migrateBefore(pool, ACCEPTED_FROM_EVENTS);
    const world = await createWorld(pool, { funds: 1_000_000n });
    const one: Job = await submitWorldJob(pool, world);
    const two: Job = await submitWorldJob(pool, world);
    const jobs = [one, two];

    // One statement accepting two events of a job and recording a repeat of the first
    // (all at one instant); later a repeat, a conflict and a mismatch, each on its own.
    const [a, b, c] = [delivery(), delivery(), delivery()];
    await writeAsBefore(one, [a, b], [{ outcome: 'already_accepted', delivery: a }]);
    await writeAsBefore(two, [c]);
    await writeAsBefore(one, [], [{ outcome: 'already_accepted', delivery: b }]);
    await writeAsBefore(two, [], [{ outcome: 'event_key_conflict', delivery: { key: c.key, body: '{"other":"bytes"}' } }]);
    await writeAsBefore(two, [], [{ outcome: 'event_mismatch', delivery: delivery() }]);
    const d = delivery();
    await writeAsBefore(one, [d]);

    const before = await Promise.all(jobs.map((job) => deliveriesAsBefore(pool, job.id)));
    expect(before[0]!.map((r) => [r.event_key, r.outcome])).toEqual([
      [a.key, 'accepted'],
      [b.key, 'accepted'],
      [a.key, 'already_accepted'],
      [b.key, 'already_accepted'],
      [d.key, 'accepted'],
    ]);
    expect(before[1]!.map((r) => r.outcome)).toEqual(['accepted', 'event_key_conflict', 'event_mismatch']);
    const others = await attemptsOtherThanAccepted();
    expect(others).toHaveLength(4);

    // An accepted attempt no event records the same way — none at all, or one of other
    // bytes — stops the migration, which applies nothing.
    const orphans = [newId(), newId()];
    await pool.query(
      `insert into delivery_attempts (id, provider, event_key, job_id, outcome, payload_hash, tenant_id)
       values ($1, $3, 'evt_without_event', $4, 'accepted', '\\x00', $5), ($2, $3, $6, $4, 'accepted', '\\x00', $5)`,
      [...orphans, one.provider, one.id, one.tenant_id, a.key],
    );
    await expect(migrate(pool)).rejects.toThrow(/2 accepted delivery attempt\(s\) have no event row recording the same delivery/);
    expect((await pool.query('select 1 from schema_migrations where version = $1', [ACCEPTED_FROM_EVENTS])).rowCount).toBe(0);
    const kept = await pool.query<{ n: number }>(`select count(*)::int as n from delivery_attempts where outcome = 'accepted'`);
    expect(kept.rows[0]!.n).toBe(4 + orphans.length);
    await pool.query('delete from delivery_attempts where id = any($1::uuid[])', [orphans]);

    // Up to 0026 only, so that what it did is seen before later migrations act.
    expect(await migrate(pool, undefined, { dir: await migrationsThrough(ACCEPTED_FROM_EVENTS) })).toEqual([
      expect.stringMatching(/^0026_/),
    ]);

    // The job view answers as before: the same deliveries, the same instants, the same order.
    for (const [i, job] of jobs.entries()) expect(await jobDeliveries(pool, job.id)).toEqual(before[i]);
    const accepted = await pool.query<{ n: number }>(`select count(*)::int as n from delivery_attempts where outcome = 'accepted'`);
    expect(accepted.rows[0]!.n).toBe(0);
    expect(await attemptsOtherThanAccepted()).toEqual(others);

    // None again: an accepted attempt is refused by the narrowed outcome check …
    const refused = await pool
      .query(
        `insert into delivery_attempts (id, provider, event_key, job_id, outcome, payload_hash, tenant_id)
         values ($1, $2, $3, $4, 'accepted', '\\x00', $5)`,
        [newId(), one.provider, a.key, one.id, one.tenant_id],
      )
      .then(
        () => null,
        (error: unknown) => mapDatabaseError(error),
      );
    expect(refused).toBeInstanceOf(CheckViolation);
    expect((refused as CheckViolation).constraint).toBe('delivery_attempts_outcome_known');

    // … and intake's statement writes only the event, which the view lists after the rest
    // (today's statement, on the schema of every migration).
    await migrate(pool);
    const e = delivery();
    await persistDeliveries(
      pool,
      [
        {
          provider: one.provider,
          eventKey: e.key,
          tenantId: one.tenant_id,
          jobId: one.id,
          type: 'job.progress',
          payloadHash: hash(e.body),
          payload: Buffer.from(e.body),
          event: { type: 'job.progress' },
        },
      ],
      [],
    );
    expect((await pool.query('select 1 from delivery_attempts where event_key = $1', [e.key])).rowCount).toBe(0);
    const now = await jobDeliveries(pool, one.id);
    expect(now.slice(0, -1)).toEqual(before[0]);
    expect(now.at(-1)).toMatchObject({ provider: one.provider, event_key: e.key, outcome: 'accepted' });
  });
});
