import { describe, expect, it } from 'vitest';
import { claimEvents } from '../../src/queue/index.js';
import { settleEvents, settleReadyEvents } from '../../src/worker/settle-event.js';
import { freshDatabase } from '../support/database.js';
import { createWorld, insertClaimedEvent, submitWorldJob, type World } from '../support/fixtures.js';
import { assertLedgerInvariants } from '../support/invariants.js';

/**
 * A first attempt taken by a row lock in the transaction that settles it
 * (settle-event.ts: settleReadyEvents, TALLY_SETTLE_CLAIM=locked): the event is written
 * once — pending to settled, never `processing` — and what that transaction cannot
 * finish, or a batch that fails, is left to a leased claim as before.
 */
const db = await freshDatabase({ max: 8 });

// Every change of an event's state, as PostgreSQL saw it: the test's own trigger.
await db.pool.query(`
  create table event_transitions (event_key text, old_state text, new_state text, at bigserial);
  create function record_event_transition() returns trigger language plpgsql as $$
  begin
    insert into event_transitions (event_key, old_state, new_state) values (new.event_key, old.state, new.state);
    return new;
  end $$;
  create trigger record_event_transition after update on webhook_events for each row
    when (old.state is distinct from new.state) execute function record_event_transition();`);

const usage = { input_tokens: 120, output_tokens: 30 };

/** A completion as intake stores it: pending, no attempt yet, no lease. */
async function pendingCompletion(world: World, set = `state = 'pending', lease_until = null, attempts = 0, fencing_token = 0`) {
  const job = await submitWorldJob(db.pool, world);
  const claimed = await insertClaimedEvent(db.pool, job);
  await db.pool.query(`update webhook_events set ${set}, event = $3 where provider = $1 and event_key = $2`, [
    claimed.provider,
    claimed.eventKey,
    JSON.stringify({ type: 'job.completed', usage }),
  ]);
  await db.pool.query('delete from event_transitions');
  return { job, eventKey: claimed.eventKey, provider: claimed.provider };
}

async function eventsOf(keys: string[]) {
  const result = await db.pool.query<{ event_key: string; state: string; attempts: number; lease_until: Date | null; fencing_token: bigint }>(
    'select event_key, state, attempts, lease_until, fencing_token from webhook_events where event_key = any($1::text[]) order by event_key',
    [keys],
  );
  return result.rows;
}

async function transitionsOf(keys: string[]) {
  const result = await db.pool.query<{ event_key: string; old_state: string; new_state: string }>(
    'select event_key, old_state, new_state from event_transitions where event_key = any($1::text[]) order by at',
    [keys],
  );
  return result.rows;
}

async function capturesOf(jobIds: string[]) {
  const result = await db.pool.query<{ n: number }>(
    `select count(*)::int as n from settlements where job_id = any($1::uuid[]) and charge_type = 'capture'`,
    [jobIds],
  );
  return result.rows[0]!.n;
}

describe('first attempts settled in the transaction that locks them', () => {
  it('writes each event once, pending to applied, stamped with a token of its own, its attempt counted; concurrent loops take each once', async () => {
    const world = await createWorld(db.pool, { funds: 10_000_000n });
    const made = [];
    for (let i = 0; i < 40; i++) made.push(await pendingCompletion(world));
    const keys = made.map((m) => m.eventKey);

    // Four loops at once over one tenant's events: SKIP LOCKED gives each event to one.
    const settled: string[] = [];
    await Promise.all(
      [1, 2, 3, 4].map(async () => {
        for (;;) {
          const batch = await settleReadyEvents(db.pool, 8);
          expect(batch.leftForLease).toBe(false);
          if (batch.claims.length === 0) return;
          batch.outcomes.forEach((outcome) => expect(outcome).toMatchObject({ kind: 'settled', result: { outcome: 'applied', jobState: 'captured' } }));
          settled.push(...batch.claims.map((c) => c.event_key));
          batch.claims.forEach((c) => expect(c.attempts).toBe(1));
        }
      }),
    );
    expect(settled.sort()).toEqual([...keys].sort());
    expect(await capturesOf(made.map((m) => m.job.id))).toBe(40);
    expect(await transitionsOf(keys)).toEqual(
      expect.arrayContaining(keys.map((key) => ({ event_key: key, old_state: 'pending', new_state: 'applied' }))),
    );
    expect(await transitionsOf(keys)).toHaveLength(40);
    const rows = await eventsOf(keys);
    expect(rows.every((r) => r.state === 'applied' && r.attempts === 1 && r.lease_until === null && r.fencing_token !== 0n)).toBe(true);
    expect(new Set(rows.map((r) => r.fencing_token)).size).toBe(40);
    await assertLedgerInvariants(db.pool);
  });

  it('leaves a retry, a lapsed claim and a usage still to fetch for a leased claim, untouched', async () => {
    const world = await createWorld(db.pool, { funds: 10_000_000n });
    const first = await pendingCompletion(world);
    const retry = await pendingCompletion(world, `state = 'pending', lease_until = null, attempts = 1, run_after = now() - interval '1 second'`);
    const lapsed = await pendingCompletion(world, `state = 'processing', lease_until = now() - interval '1 second', attempts = 1`);
    const fetch = await pendingCompletion(world);
    await db.pool.query(`update webhook_events set event = event || '{"fetch_usage": true}', usage = null where event_key = $1`, [fetch.eventKey]);
    const others = [retry, lapsed, fetch].map((m) => m.eventKey);
    const before = await eventsOf(others);

    const batch = await settleReadyEvents(db.pool, 32);
    expect(batch.claims.map((c) => c.event_key)).toEqual([first.eventKey]);
    expect(batch.leftForLease).toBe(true);
    expect(await eventsOf(others)).toEqual(before);
    expect(await transitionsOf(others)).toEqual([]);

    // The leased claim takes them, as it always has.
    const claimed = await claimEvents(db.pool, 32, 60);
    expect(claimed.map((c) => c.event_key).sort()).toEqual([...others].sort());
    expect(claimed.every((c) => c.locked === undefined)).toBe(true);
    await settleEvents(db.pool, claimed);
    expect(await capturesOf([first, retry, lapsed].map((m) => m.job.id))).toBe(3);
    // The usage fetch has no provider API to reach here: parked, out of the next test's way.
    await db.pool.query(`update webhook_events set state = 'dead', lease_until = null where event_key = $1`, [fetch.eventKey]);
  });

  it('rolls a failing batch back whole — nothing written, the events still pending — and a leased claim then records the one failure as its own', async () => {
    const world = await createWorld(db.pool, { funds: 10_000_000n });
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await pendingCompletion(world));
    const failing = made[2]!;
    // A fault for one job only, from the database itself.
    await db.pool.query(`
      create function refuse_one_settlement() returns trigger language plpgsql as $$
      begin
        if new.job_id = '${failing.job.id}' then raise exception 'injected fault for job %', new.job_id; end if;
        return new;
      end $$;
      create trigger refuse_one_settlement before insert on settlements for each row execute function refuse_one_settlement();`);
    try {
      await expect(settleReadyEvents(db.pool, 32)).rejects.toThrow(/injected fault/);
      const keys = made.map((m) => m.eventKey);
      expect((await eventsOf(keys)).map((r) => [r.state, r.attempts, r.lease_until])).toEqual(keys.map(() => ['pending', 0, null]));
      expect(await transitionsOf(keys)).toEqual([]);
      expect(await capturesOf(made.map((m) => m.job.id))).toBe(0);

      // What the worker does next (worker.ts: a leased claim after a failed locked batch).
      const claimed = await claimEvents(db.pool, 32, 60);
      expect(claimed).toHaveLength(5);
      const outcomes = await settleEvents(db.pool, claimed);
      expect(outcomes.filter((o) => o.kind === 'settled')).toHaveLength(4);
      expect(outcomes.find((_, i) => claimed[i]!.event_key === failing.eventKey)).toMatchObject({ kind: 'retry' });
      const [failed] = await eventsOf([failing.eventKey]);
      expect(failed).toMatchObject({ state: 'pending', attempts: 1, lease_until: null });
    } finally {
      await db.pool.query('drop trigger refuse_one_settlement on settlements; drop function refuse_one_settlement()');
    }
    expect(await capturesOf(made.map((m) => m.job.id))).toBe(4);
  });
});
