import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/pool.js';
import { withTransaction } from '../../src/db/transaction.js';
import {
  afterFailure,
  claimDue,
  claimNamed,
  commitFenced,
  deadLetter,
  engineStatements,
  extendLeases,
  LeaseLost,
  readBack,
  recordFailure,
  retryLater,
  writeFenced,
  type FencedClaim,
  type QueueTable,
  type RetryPolicy,
} from '../../src/queue/engine/index.js';
import { EVENTS_TABLE } from '../../src/queue/events-table.js';
import { DELIVERIES_TABLE } from '../../src/outbound/deliveries-table.js';
import { CommitCuttingProxy } from '../../sim/commit-cutting-proxy.js';
import { freshDatabase } from '../support/database.js';

/**
 * The queue engine itself (src/queue/engine/), once, on a table of its own: the
 * guarantees both queues (webhook events, outbound deliveries) and the next ones rely on.
 * Real PostgreSQL, many connections claiming at once.
 */
const db = await freshDatabase({ max: 24 });
const proxy = await CommitCuttingProxy.start(db.url);
const proxied = createPool(proxy.urlFor(db.url), { max: 4 });

const ITEMS: QueueTable = {
  name: 'engine_items',
  table: 'engine_items',
  key: [{ column: 'id', type: 'bigint' }],
  states: { column: 'state', claimable: ['pending', 'processing'], claimed: 'processing', retry: 'pending', dead: 'dead' },
  lease: 'lease_until',
  leaseMirror: null,
  token: 'token',
  due: 'due_at',
  attempts: { column: 'attempts', counted: 'at_claim' },
  error: 'last_error',
  deadAlso: null,
  claim: { eligible: null, order: 'c.due_at, c.id', group: null, join: null, returning: 'w.id, w.token, w.attempts', plan: 'per_call' },
};

interface Item {
  id: bigint;
  token: bigint;
  attempts: number;
}

const fenced = (item: Item): FencedClaim => ({ key: [item.id], token: item.token });

beforeAll(async () => {
  await db.pool.query(`create table engine_items (
    id bigint primary key,
    state text not null default 'pending',
    attempts integer not null default 0,
    due_at timestamptz not null default now(),
    lease_until timestamptz,
    token bigint,
    last_error text,
    done_at timestamptz
  )`);
  await db.pool.query(`create index engine_items_due_idx on engine_items (due_at, id) where state in ('pending', 'processing')`);
});
afterEach(async () => {
  proxy.reset();
  await db.pool.query('truncate engine_items');
});
afterAll(async () => {
  await proxied.end();
  await proxy.close();
});

async function addItems(count: number, from = 1): Promise<void> {
  await db.pool.query('insert into engine_items (id) select g from generate_series($1::bigint, $2::bigint) g', [from, from + count - 1]);
}

async function row(id: bigint) {
  const result = await db.pool.query<{ state: string; attempts: number; token: bigint | null; last_error: string | null; done_at: Date | null }>(
    'select state, attempts, token, last_error, done_at from engine_items where id = $1',
    [id],
  );
  return result.rows[0]!;
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Waits, on the database's clock, until the item's lease has run out. */
async function leaseLapsed(id: bigint): Promise<void> {
  await until(async () => (await db.pool.query('select lease_until < now() as lapsed from engine_items where id = $1', [id])).rows[0].lapsed, 'the lease to lapse');
}

const complete = (tx: Parameters<typeof writeFenced>[0], item: Item) =>
  writeFenced(tx, ITEMS, fenced(item), { name: 'complete', set: "state = 'done', done_at = now()" });

describe('claims under concurrency', () => {
  it('many connections claiming at once take every item exactly once, each claim with its own token', async () => {
    await addItems(600);
    const claimed: Item[] = [];
    const claimer = async () => {
      for (;;) {
        const batch = await claimDue<Item>(db.pool, ITEMS, 7, 60);
        if (batch.length === 0) return;
        claimed.push(...batch);
      }
    };
    await Promise.all(Array.from({ length: 16 }, claimer));
    expect(claimed).toHaveLength(600);
    expect(new Set(claimed.map((c) => c.id)).size).toBe(600);
    expect(new Set(claimed.map((c) => c.token)).size).toBe(600);
    // The claim started each one's first attempt.
    expect(claimed.every((c) => c.attempts === 1)).toBe(true);
    const states = await db.pool.query(`select state, count(*)::int as n from engine_items group by state`);
    expect(states.rows).toEqual([{ state: 'processing', n: 600 }]);
  });

  it('a named item claimed by many connections at once is claimed once, and not again while its lease lasts', async () => {
    await addItems(1);
    const results = await Promise.all(Array.from({ length: 16 }, () => claimNamed<Item>(db.pool, ITEMS, [1n], 60)));
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    expect(await claimNamed<Item>(db.pool, ITEMS, [1n], 60)).toBeNull();
    expect(await claimDue<Item>(db.pool, ITEMS, 10, 60)).toEqual([]);
  });

  it('tokens come from one sequence, fencing_tokens, for every queue', () => {
    for (const table of [ITEMS, EVENTS_TABLE, DELIVERIES_TABLE]) {
      expect(engineStatements(table, 8)[`${table.name}_claim`]).toContain("nextval('fencing_tokens')");
    }
  });
});

describe('leases and fencing', () => {
  it("an expired lease is claimed again with a newer token, and the old token's writes are refused", async () => {
    await addItems(1);
    const [first] = await claimDue<Item>(db.pool, ITEMS, 1, 0.2);
    await leaseLapsed(first!.id);
    const [second] = await claimDue<Item>(db.pool, ITEMS, 1, 60);
    expect(second!.id).toBe(first!.id);
    expect(second!.token).toBeGreaterThan(first!.token);
    // Taking over a lapsed claim continues its attempt: a lost claim is no attempt.
    expect(second!.attempts).toBe(1);

    expect(await retryLater(db.pool, ITEMS, fenced(first!), 10, 'late')).toBe(false);
    expect(await deadLetter(db.pool, ITEMS, fenced(first!), 'late')).toBe(false);
    expect(await withTransaction(db.pool, (tx) => complete(tx, first!))).toBe(false);
    expect(await extendLeases(db.pool, ITEMS, [fenced(first!)], 60)).toBe(0);
    const lost = await commitFenced(db.pool, ITEMS, fenced(first!), async (tx) => {
      await tx.query(`update engine_items set last_error = 'written by the old owner' where id = $1`, [first!.id]);
      if (!(await complete(tx, first!))) throw new LeaseLost(`item ${first!.id}`);
      return 'done';
    });
    expect(lost).toBe('lease_lost');
    expect(await row(first!.id)).toMatchObject({ state: 'processing', token: second!.token, last_error: null });

    expect(await withTransaction(db.pool, (tx) => complete(tx, second!))).toBe(true);
    expect(await row(first!.id)).toMatchObject({ state: 'done' });
  });

  it('extends the leases of claims still current only', async () => {
    await addItems(2);
    const claims = await claimDue<Item>(db.pool, ITEMS, 2, 0.2);
    expect(await extendLeases(db.pool, ITEMS, claims.map(fenced), 60)).toBe(2);
    const lapsed = await db.pool.query(`select count(*)::int as n from engine_items where lease_until < now() + interval '30 seconds'`);
    expect(lapsed.rows[0].n).toBe(0);
    expect(await claimDue<Item>(db.pool, ITEMS, 2, 60)).toEqual([]);
  });
});

describe('retries and dead letters', () => {
  const policy: RetryPolicy = { backoff: { firstMs: 100, capMs: 1_000, floorMs: 'half' }, maxAttempts: 6, retryForMs: null };

  it('the backoff ceiling doubles from the first retry up to its cap, with jitter under it', () => {
    const ceilings = [1, 2, 3, 4, 5].map((attempts) => afterFailure({ ...policy, maxAttempts: null }, { attempts }, () => 1));
    expect(ceilings).toEqual([100, 200, 400, 800, 1_000].map((delayMs) => ({ kind: 'retry', delayMs })));
    expect(afterFailure({ ...policy, maxAttempts: null }, { attempts: 40 }, () => 1)).toEqual({ kind: 'retry', delayMs: 1_000 });
    expect(afterFailure(policy, { attempts: 3 }, () => 0)).toEqual({ kind: 'retry', delayMs: 200 });
    const window: RetryPolicy = { backoff: { firstMs: 100, capMs: 1_000, floorMs: 0 }, maxAttempts: null, retryForMs: 5_000 };
    expect(afterFailure(window, { attempts: 9, ageMs: 4_500 }, () => 0.4)).toEqual({ kind: 'retry', delayMs: 400 });
    expect(afterFailure(window, { attempts: 9, ageMs: 4_700 }, () => 0.4)).toEqual({ kind: 'dead' });
  });

  it('stores each retry due after its delay, and dead-letters after N attempts with the last error', async () => {
    await addItems(1);
    const delays: number[] = [];
    for (let attempt = 1; ; attempt++) {
      const item = (await claimNamed<Item>(db.pool, ITEMS, [1n], 60))!;
      expect(item.attempts).toBe(attempt);
      const outcome = await withTransaction(db.pool, async (tx) => {
        const next = await recordFailure(tx, ITEMS, policy, fenced(item), { attempts: item.attempts }, `failure ${attempt}`);
        // now() is the transaction's instant: the stored due time is exactly the delay away.
        const due = await tx.query<{ ms: number }>(`select (extract(epoch from due_at - now()) * 1000)::float8 as ms from engine_items where id = 1`);
        return { next, dueInMs: due.rows[0]!.ms };
      });
      if (outcome.next.kind === 'dead') break;
      expect(outcome.next.kind).toBe('retry');
      if (outcome.next.kind === 'retry') {
        expect(outcome.dueInMs).toBeCloseTo(outcome.next.delayMs, 3);
        delays.push(outcome.next.delayMs);
      }
      expect(await row(1n)).toMatchObject({ state: 'pending', last_error: `failure ${attempt}` });
    }
    expect(delays).toHaveLength(policy.maxAttempts! - 1);
    const ceilings = [100, 200, 400, 800, 1_000];
    delays.forEach((delay, i) => {
      expect(delay).toBeGreaterThanOrEqual(ceilings[i]! / 2);
      expect(delay).toBeLessThanOrEqual(ceilings[i]!);
    });
    expect(await row(1n)).toMatchObject({ state: 'dead', attempts: policy.maxAttempts, last_error: `failure ${policy.maxAttempts}` });
    // A dead letter is claimed by nobody.
    expect(await claimNamed<Item>(db.pool, ITEMS, [1n], 60)).toBeNull();
  });

  it('dead-letters a permanent failure at once', async () => {
    await addItems(1);
    const [item] = await claimDue<Item>(db.pool, ITEMS, 1, 60);
    expect(await recordFailure(db.pool, ITEMS, policy, fenced(item!), { attempts: 1, permanent: true }, 'no retry can fix this')).toEqual({ kind: 'dead' });
    expect(await row(item!.id)).toMatchObject({ state: 'dead', attempts: 1 });
  });

  it('a retried item is not claimed before its time, then is', async () => {
    await addItems(1);
    const [item] = await claimDue<Item>(db.pool, ITEMS, 1, 60);
    expect(await retryLater(db.pool, ITEMS, fenced(item!), 300, 'transient')).toBe(true);
    expect(await claimDue<Item>(db.pool, ITEMS, 1, 60)).toEqual([]);
    await until(async () => (await db.pool.query('select due_at <= now() as due from engine_items where id = $1', [item!.id])).rows[0].due, 'the retry to be due');
    const [again] = await claimDue<Item>(db.pool, ITEMS, 1, 60);
    expect(again).toMatchObject({ id: item!.id, attempts: 2 });
  });
});

describe('a COMMIT whose answer was lost', () => {
  const write = (item: Item, runs: { n: number }) => async (tx: Parameters<typeof writeFenced>[0]) => {
    runs.n++;
    if (!(await complete(tx, item))) throw new LeaseLost(`item ${item.id}`);
    return 'done' as const;
  };

  it('is read back, not written again, when it did commit', async () => {
    await addItems(1);
    const [item] = await claimDue<Item>(db.pool, ITEMS, 1, 60);
    proxy.arm('after');
    const runs = { n: 0 };
    expect(await commitFenced(proxied, ITEMS, fenced(item!), write(item!, runs))).toBe('done');
    expect(proxy.fired.map((f) => f.mode)).toEqual(['after']);
    expect(runs.n).toBe(1);
    expect(await readBack(db.pool, ITEMS, fenced(item!), false)).toBe('committed');
  });

  it('is written again under the same claim when it did not commit', async () => {
    await addItems(1);
    const [item] = await claimDue<Item>(db.pool, ITEMS, 1, 60);
    proxy.arm('before');
    const runs = { n: 0 };
    expect(await commitFenced(proxied, ITEMS, fenced(item!), write(item!, runs))).toBe('done');
    expect(proxy.fired.map((f) => f.mode)).toEqual(['before']);
    expect(runs.n).toBe(2);
    expect(await row(item!.id)).toMatchObject({ state: 'done', token: item!.token });
  });

  it('writes nothing more once another claim has taken the row', async () => {
    await addItems(1);
    const [first] = await claimDue<Item>(db.pool, ITEMS, 1, 0.2);
    await leaseLapsed(first!.id);
    const [second] = await claimDue<Item>(db.pool, ITEMS, 1, 60);
    expect(await readBack(db.pool, ITEMS, fenced(first!), false)).toBe('moved_on');
    expect(await readBack(db.pool, ITEMS, fenced(second!), false)).toBe('still_claimed');
  });
});
