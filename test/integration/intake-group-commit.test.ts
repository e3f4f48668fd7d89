import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CheckViolation } from '../../src/db/errors.js';
import { DeliveryWriter } from '../../src/intake/delivery-writer.js';
import { GroupCommit } from '../../src/intake/group-commit.js';
import type { AttemptRecord, NewEvent } from '../../src/queue/index.js';
import { freshDatabase } from '../support/database.js';
import { createWorld, submitWorldJob } from '../support/fixtures.js';
import { jobDeliveries } from '../support/jobs.js';

const db = await freshDatabase({ max: 12 });

function eventFor(job: { id: string; tenant_id: string; provider: string }, eventKey = `evt_${randomUUID()}`): NewEvent {
  const payload = Buffer.from(JSON.stringify({ key: eventKey }));
  return {
    provider: job.provider,
    eventKey,
    tenantId: job.tenant_id,
    jobId: job.id,
    type: 'job.completed',
    payloadHash: createHash('sha256').update(payload).digest(),
    payload,
    event: { type: 'job.completed', usage: { input_tokens: 1 } },
  };
}

/** The outcomes delivery_attempts holds for these keys. */
async function attemptRows(eventKeys: string[]) {
  const result = await db.pool.query<{ outcome: string }>(
    'select outcome from delivery_attempts where event_key = any($1::text[]) order by outcome',
    [eventKeys],
  );
  return result.rows.map((r) => r.outcome);
}

async function stored(eventKeys: string[]) {
  const result = await db.pool.query<{ event_key: string; job_id: string; seq: string }>(
    `select event_key, job_id, seq::text from webhook_events where event_key = any($1::text[]) order by job_id, seq`,
    [eventKeys],
  );
  return result.rows;
}

describe('intake group commit', () => {
  it('writes concurrent deliveries in shared statements; each job numbers its events 1, 2, … in commit order', async () => {
    const world = await createWorld(db.pool, { funds: 10_000_000n });
    const jobs = await Promise.all(Array.from({ length: 40 }, () => submitWorldJob(db.pool, world)));
    const writer = new DeliveryWriter(db.pool);
    const groups: number[] = [];
    writer.onGroup = (size) => groups.push(size);
    // Three events per job, all submitted at once: the writes that find the writer busy
    // queue and go in the next group.
    const events = jobs.flatMap((job) => [eventFor(job), eventFor(job), eventFor(job)]);
    const answers = await Promise.all(events.map((event) => writer.write({ event })));
    expect(answers.every((a) => a === true)).toBe(true);
    expect(groups.reduce((a, b) => a + b, 0)).toBe(events.length);
    expect(Math.max(...groups), `group sizes ${groups.join(', ')}`).toBeGreaterThan(1);

    const rows = await stored(events.map((e) => e.eventKey));
    expect(rows).toHaveLength(events.length);
    for (const job of jobs) {
      expect(rows.filter((r) => r.job_id === job.id).map((r) => r.seq), job.id).toEqual(['1', '2', '3']);
    }
    const counters = await db.pool.query<{ event_seq: bigint }>(`select event_seq from jobs where id = any($1::uuid[])`, [jobs.map((j) => j.id)]);
    expect(counters.rows.every((r) => r.event_seq === 3n)).toBe(true);
    // Exactly one accepted delivery per event, each in the job view of its job; none of
    // them wrote an attempt row (the event is the record).
    for (const job of jobs) {
      const keys = events.filter((e) => e.jobId === job.id).map((e) => e.eventKey);
      const seen = await jobDeliveries(db.pool, job.id);
      expect(seen.map((d) => d.outcome)).toEqual(['accepted', 'accepted', 'accepted']);
      expect(seen.map((d) => d.event_key).sort()).toEqual([...keys].sort());
    }
    expect(await attemptRows(events.map((e) => e.eventKey))).toEqual([]);
  });

  it('answers a repeated key in the group, or one committed before, as raced; records attempts alone; a bad write fails only itself', async () => {
    const world = await createWorld(db.pool, { funds: 10_000_000n });
    const job = await submitWorldJob(db.pool, world);
    const writer = new DeliveryWriter(db.pool);
    const groups: number[] = [];
    writer.onGroup = (size) => groups.push(size);
    const committed = eventFor(job);
    expect(await writer.write({ event: committed })).toBe(true);

    const twin = eventFor(job);
    const attempt: AttemptRecord = {
      id: randomUUID(),
      provider: job.provider,
      eventKey: committed.eventKey,
      jobId: job.id,
      outcome: 'already_accepted',
      payloadHash: committed.payloadHash,
      detail: null,
    };
    // An outcome the table's check refuses: the group fails, and each write is done alone.
    const bad = { ...attempt, id: randomUUID(), outcome: 'bogus' as AttemptRecord['outcome'] };
    const writes = [
      // some are written at once (two writes in flight); the rest queue and form one group
      writer.write({ event: eventFor(job) }),
      writer.write({ event: eventFor(job) }),
      writer.write({ event: { ...committed } }),
      writer.write({ event: twin }),
      writer.write({ event: { ...twin } }),
      writer.write({ attempt }),
      writer.write({ attempt: bad }),
    ];
    const settledWrites = await Promise.allSettled(writes);
    const answers = settledWrites.slice(0, 6).map((s) => (s.status === 'fulfilled' ? s.value : s.reason));
    // The twins are written alone once the group failed, at once: one of them inserts.
    expect([...answers.slice(0, 3), answers[3] !== answers[4], answers[5]]).toEqual([true, true, false, true, true]);
    const failed = settledWrites[6]!;
    expect(failed.status).toBe('rejected');
    expect((failed as PromiseRejectedResult).reason).toBeInstanceOf(CheckViolation);
    // the bad write shared a group with others, and only it failed
    expect(Math.max(...groups)).toBeGreaterThan(2);

    const recorded = await jobDeliveries(db.pool, job.id, committed.eventKey);
    expect(recorded.map((d) => d.outcome)).toEqual(['accepted', 'already_accepted']);
    expect(await attemptRows([committed.eventKey])).toEqual(['already_accepted']);
    expect((await stored([twin.eventKey])).map((r) => r.seq)).toHaveLength(1);
  });

  it('writing the same group again (a commit whose answer was lost) writes nothing twice', async () => {
    const world = await createWorld(db.pool, { funds: 10_000_000n });
    const job = await submitWorldJob(db.pool, world);
    const writer = new DeliveryWriter(db.pool);
    const event = eventFor(job);
    const attempt: AttemptRecord = { id: randomUUID(), provider: job.provider, eventKey: event.eventKey, jobId: job.id, outcome: 'already_accepted', payloadHash: event.payloadHash, detail: { note: 'x' } };
    expect(await writer.write({ event })).toBe(true);
    expect(await writer.write({ attempt })).toBe(true);
    expect(await writer.write({ event })).toBe(false);
    expect(await writer.write({ attempt })).toBe(true);
    expect((await jobDeliveries(db.pool, job.id)).map((d) => [d.event_key, d.outcome])).toEqual([
      [event.eventKey, 'accepted'],
      [event.eventKey, 'already_accepted'],
    ]);
    expect(await attemptRows([event.eventKey])).toEqual(['already_accepted']);
  });
});

describe('GroupCommit', () => {
  it('writes a lone item at once, groups what arrives while writes are in flight, and never more than maxGroup', async () => {
    const written: number[][] = [];
    const releases: (() => void)[] = [];
    const group = new GroupCommit<number, number>(
      (items) => {
        written.push(items);
        return new Promise((resolve) => releases.push(() => resolve(items.map((i) => i * 10))));
      },
      { maxInFlight: 1, maxGroup: 3 },
    );
    const first = group.submit(1);
    expect(written).toEqual([[1]]);
    const rest = [2, 3, 4, 5].map((i) => group.submit(i));
    expect(written).toEqual([[1]]);
    releases.shift()!();
    expect(await first).toBe(10);
    await expect.poll(() => written.length).toBe(2);
    expect(written[1]).toEqual([2, 3, 4]);
    releases.shift()!();
    await expect.poll(() => written.length).toBe(3);
    expect(written[2]).toEqual([5]);
    releases.shift()!();
    expect(await Promise.all(rest)).toEqual([20, 30, 40, 50]);
  });
});
