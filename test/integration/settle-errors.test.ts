import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DeadlockDetected, SerializationFailure, UniqueViolation } from '../../src/db/errors.js';
import { MAX_TRANSACTION_ATTEMPTS, withTransaction } from '../../src/db/transaction.js';
import { newId } from '../../src/ids.js';
import { JobNotFound, SettlementMismatch } from '../../src/ledger/errors.js';
import { LeaseLost } from '../../src/queue/index.js';
import { settle } from '../../src/ledger/settle.js';
import { settlementKey } from '../../src/lifecycle/index.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import {
  RESERVATION,
  billableOf,
  createWorld,
  eventRow,
  insertClaimedEvent,
  jobRow,
  submitWorldJob,
  walletRow,
} from '../support/fixtures.js';
import { assertLedgerInvariants, ledgerViolations } from '../support/invariants.js';
import { forgeEntry } from '../support/forge-entry.js';

const db = await freshDatabase({ max: 12 });
/**
 * Tests that forge rows behind settle()'s back (raw SQL into settlements and
 * ledger_entries) break the ledger's invariants on purpose; they get a database of
 * their own so the invariants of `db` are still checked after every test.
 */
const forged = await freshDatabase({ max: 6 });
afterEach(() => assertLedgerInvariants(db.pool));

const usage = { input_tokens: 300, output_tokens: 200 };
const completed = { type: 'job.completed', usage } as const;

async function count(pool: TestDatabase['pool'], sql: string, params: unknown[]): Promise<number> {
  const result = await pool.query<{ n: number }>(`select count(*)::int as n from (${sql}) x`, params);
  return result.rows[0]!.n;
}

describe('a unique violation on another constraint is an error, never a duplicate', () => {
  it('a forged capture entry under the capture key: UniqueViolation on ledger_entries_settlement_key_entry_type_grant_key, nothing kept', async () => {
    const world = await createWorld(forged.pool, { funds: RESERVATION });
    const job = await submitWorldJob(forged.pool, world);
    const key = settlementKey(world.tenantId, job.id, 'capture', 1);
    const revenue = await forged.pool.query<{ id: string }>(`select id from accounts where tenant_id = $1 and kind = 'revenue'`, [world.tenantId]);
    const share = await forged.pool.query<{ grant_id: string }>('select grant_id from hold_shares where job_id = $1', [job.id]);
    await forgeEntry(forged.pool, {
      settlementKey: key,
      entryType: 'capture',
      flags: 'posted',
      debitAccountId: world.wallet.id,
      creditAccountId: revenue.rows[0]!.id,
      amount: 1n,
      currency: 'USD',
      tenantId: world.tenantId,
      jobId: job.id,
      grantId: share.rows[0]!.grant_id,
    });
    const walletBefore = await walletRow(forged.pool, world.wallet.id);

    const error = await settle(forged.pool, { jobId: job.id, event: completed }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UniqueViolation);
    expect((error as UniqueViolation).constraint).toBe('ledger_entries_settlement_key_entry_type_grant_key');

    expect(await count(forged.pool, 'select 1 from settlements where job_id = $1', [job.id])).toBe(0);
    expect(await count(forged.pool, 'select 1 from ledger_entries where settlement_key = $1', [key])).toBe(1); // only the forged one
    expect(await jobRow(forged.pool, job.id)).toMatchObject({ state: 'reserved', captured: null });
    expect(await walletRow(forged.pool, world.wallet.id)).toEqual(walletBefore);
    const hold = await forged.pool.query('select resolved_by from holds where job_id = $1', [job.id]);
    expect(hold.rows[0]).toEqual({ resolved_by: null });
    // and the invariant checker sees the forgery: the entry moved no projection
    expect(Object.keys(await ledgerViolations(forged.pool))).toEqual(expect.arrayContaining(['projection_equals_entries', 'settlement_entries']));
  });

  it('a forged settlement row with the capture key (job left reserved): settle returns it, replayed, through the intended constraint', async () => {
    const world = await createWorld(forged.pool, { funds: RESERVATION });
    const job = await submitWorldJob(forged.pool, world);
    const key = settlementKey(world.tenantId, job.id, 'capture', 1);
    const forgedId = newId();
    await forged.pool.query(
      `insert into settlements (id, settlement_key, tenant_id, job_id, charge_type, version, amount, remainder)
       values ($1, $2, $3, $4, 'capture', 1, 77, $5)`,
      [forgedId, key, world.tenantId, job.id, (RESERVATION - 77n).toString()],
    );
    const result = await settle(forged.pool, { jobId: job.id, event: completed });
    expect(result).toMatchObject({ outcome: 'applied', replayed: true, jobState: 'reserved' });
    expect(result.settlement).toMatchObject({ id: forgedId, settlement_key: key, amount: 77n });
    // settle wrote nothing of its own
    expect(await count(forged.pool, 'select 1 from ledger_entries where settlement_key = $1', [key])).toBe(0);
    expect(await count(forged.pool, 'select 1 from settlements where job_id = $1', [job.id])).toBe(1);

    // With a claimed event, settling again on the committed state cannot help (the job
    // row does not show the capture): reported once, not retried for ever.
    const claim = await insertClaimedEvent(forged.pool, job);
    await expect(settle(forged.pool, { jobId: job.id, event: completed, claim })).rejects.toBeInstanceOf(SettlementMismatch);
    expect(await eventRow(forged.pool, claim)).toMatchObject({ state: 'processing', settlement_key: null });
    expect(Object.keys(await ledgerViolations(forged.pool))).toContain('job_matches_settlements');
  });

  it('a forged settlement whose charge type, job or version disagrees with its key: SettlementMismatch', async () => {
    const world = await createWorld(forged.pool, { funds: RESERVATION * 3n });
    const job = await submitWorldJob(forged.pool, world);
    const other = await submitWorldJob(forged.pool, world);
    const captureKey = settlementKey(world.tenantId, job.id, 'capture', 1);
    await forged.pool.query(
      `insert into settlements (id, settlement_key, tenant_id, job_id, charge_type, version, amount)
       values ($1, $2, $3, $4, 'release', 1, $5)`,
      [newId(), captureKey, world.tenantId, job.id, RESERVATION.toString()],
    );
    const mismatch = await settle(forged.pool, { jobId: job.id, event: completed }).catch((e: unknown) => e);
    expect(mismatch).toBeInstanceOf(SettlementMismatch);
    expect((mismatch as SettlementMismatch).settlementKey).toBe(captureKey);

    // the other job's release key, on a row that belongs to `job`
    const releaseKey = settlementKey(world.tenantId, other.id, 'release', 1);
    await forged.pool.query(
      `insert into settlements (id, settlement_key, tenant_id, job_id, charge_type, version, amount)
       values ($1, $2, $3, $4, 'release', 1, $5)`,
      [newId(), releaseKey, world.tenantId, job.id, RESERVATION.toString()],
    );
    await expect(settle(forged.pool, { jobId: other.id, event: { type: 'job.failed' } })).rejects.toBeInstanceOf(SettlementMismatch);
    expect(await jobRow(forged.pool, other.id)).toMatchObject({ state: 'reserved' });
    expect(await count(forged.pool, 'select 1 from ledger_entries where job_id = $1', [other.id])).toBe(1); // its reserve only

    // an adjustment key whose row carries another version
    const third = await submitWorldJob(forged.pool, world);
    await settle(forged.pool, { jobId: third.id, event: completed });
    const adjustmentKey = settlementKey(world.tenantId, third.id, 'adjustment', 2);
    await forged.pool.query(
      `insert into settlements (id, settlement_key, tenant_id, job_id, charge_type, version, amount)
       values ($1, $2, $3, $4, 'adjustment', 3, 0)`,
      [newId(), adjustmentKey, world.tenantId, third.id],
    );
    const corrected = { type: 'job.usage_corrected', correction: 2, usage: { input_tokens: 1 } } as const;
    await expect(settle(forged.pool, { jobId: third.id, event: corrected })).rejects.toBeInstanceOf(SettlementMismatch);
    expect(await jobRow(forged.pool, third.id)).toMatchObject({ highest_correction: 0, adjusted: 0n });
  });
});

describe('other errors', () => {
  it('an unknown job is JobNotFound', async () => {
    await expect(settle(db.pool, { jobId: newId(), event: completed })).rejects.toBeInstanceOf(JobNotFound);
  });

  it('a claim whose fencing token is no longer current is LeaseLost, and nothing is written', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    const claim = await insertClaimedEvent(db.pool, job, { fencingToken: 5n });
    await expect(settle(db.pool, { jobId: job.id, event: completed, claim: { ...claim, fencingToken: 4n } })).rejects.toBeInstanceOf(LeaseLost);
    expect(await jobRow(db.pool, job.id)).toMatchObject({ state: 'reserved' });
    expect(await count(db.pool, 'select 1 from settlements where job_id = $1', [job.id])).toBe(0);

    const result = await settle(db.pool, { jobId: job.id, event: completed, claim });
    expect(result).toMatchObject({ outcome: 'applied', replayed: false });
    expect(await eventRow(db.pool, claim)).toMatchObject({ state: 'applied', settlement_key: result.settlement!.settlement_key });
  });
});

describe('serialization failures and deadlocks are retried', () => {
  beforeAll(async () => {
    // Fault injection inside the real server: a trigger on settlements raises the
    // SQLSTATE listed for the job, `times` times. The count lives in a sequence,
    // because nextval() survives the rollback that the error causes.
    await db.pool.query(`
      create table inject_failure (job_id uuid primary key, counter regclass not null, times int not null, sqlstate text not null);
      create function inject_failure() returns trigger language plpgsql as $$
      declare f inject_failure;
      begin
        select * into f from inject_failure where job_id = new.job_id;
        if found and nextval(f.counter) <= f.times then
          raise exception 'injected failure % for job %', f.sqlstate, new.job_id using errcode = f.sqlstate;
        end if;
        return new;
      end $$;
      create trigger inject_failure before insert on settlements for each row execute function inject_failure();
      create table oncall (id int primary key, on_call boolean not null);
      create table pair (id int primary key, n int not null);`);
  });

  async function injectFailures(jobId: string, times: number, sqlstate: string): Promise<string> {
    const counter = `inject_${jobId.replaceAll('-', '')}`;
    await db.pool.query(`create sequence ${counter}`);
    await db.pool.query('insert into inject_failure (job_id, counter, times, sqlstate) values ($1, $2, $3, $4)', [jobId, counter, times, sqlstate]);
    return counter;
  }

  async function invocations(counter: string): Promise<bigint> {
    const result = await db.pool.query<{ last_value: bigint; is_called: boolean }>(`select last_value, is_called from ${counter}`);
    return result.rows[0]!.is_called ? result.rows[0]!.last_value : 0n;
  }

  it('settle retries a 40001 raised inside its transaction and applies once', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    const counter = await injectFailures(job.id, 2, '40001');
    const retries: Error[] = [];
    const result = await settle(db.pool, { jobId: job.id, event: completed }, { onRetry: (e) => retries.push(e) });
    expect(retries).toHaveLength(2);
    for (const e of retries) expect(e).toBeInstanceOf(SerializationFailure);
    expect(await invocations(counter)).toBe(3n); // two failed attempts, one that committed
    expect(result).toMatchObject({ outcome: 'applied', replayed: false });
    expect(result.settlement?.amount).toBe(billableOf(usage));
    expect(await count(db.pool, "select 1 from ledger_entries where job_id = $1 and entry_type = 'capture'", [job.id])).toBe(1);
  });

  it('settle retries a 40P01 the same way', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    await settle(db.pool, { jobId: job.id, event: completed });
    await injectFailures(job.id, 1, '40P01');
    const retries: Error[] = [];
    const result = await settle(
      db.pool,
      { jobId: job.id, event: { type: 'job.usage_corrected', correction: 1, usage: { input_tokens: 10 } } },
      { onRetry: (e) => retries.push(e) },
    );
    expect(retries.map((e) => e.constructor)).toEqual([DeadlockDetected]);
    expect(result.settlement).toMatchObject({ charge_type: 'adjustment', amount: 20n - billableOf(usage) });
  });

  it('gives up after MAX_TRANSACTION_ATTEMPTS and leaves nothing behind', async () => {
    const world = await createWorld(db.pool, { funds: RESERVATION });
    const job = await submitWorldJob(db.pool, world);
    const counter = await injectFailures(job.id, 1_000, '40001');
    const retries: Error[] = [];
    await expect(settle(db.pool, { jobId: job.id, event: completed }, { onRetry: (e) => retries.push(e) })).rejects.toBeInstanceOf(
      SerializationFailure,
    );
    expect(retries).toHaveLength(MAX_TRANSACTION_ATTEMPTS - 1);
    expect(await invocations(counter)).toBe(BigInt(MAX_TRANSACTION_ATTEMPTS));
    expect(await jobRow(db.pool, job.id)).toMatchObject({ state: 'reserved' });
    expect(await count(db.pool, 'select 1 from settlements where job_id = $1', [job.id])).toBe(0);
  });

  /** Resolves once `parties` callers have arrived; later arrivals pass straight through. */
  function barrier(parties: number) {
    let arrived = 0;
    let release!: () => void;
    const all = new Promise<void>((resolve) => (release = resolve));
    return () => {
      if (++arrived >= parties) release();
      return all;
    };
  }

  it('withTransaction(serializable) retries the loser of a real write skew', async () => {
    await db.pool.query('insert into oncall values (1, true), (2, true)');
    const bothRead = barrier(2);
    const retries: Error[] = [];
    const goOffCall = (me: number) =>
      withTransaction(
        db.pool,
        async (tx) => {
          const onCall = await tx.query<{ n: number }>('select count(*)::int as n from oncall where on_call');
          await bothRead(); // both have read before either writes: a true conflict
          if (onCall.rows[0]!.n >= 2) await tx.query('update oncall set on_call = false where id = $1', [me]);
          return onCall.rows[0]!.n;
        },
        { isolation: 'serializable', onRetry: (e) => retries.push(e) },
      );
    const seen = await Promise.all([goOffCall(1), goOffCall(2)]);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toBeInstanceOf(SerializationFailure);
    expect(seen.sort()).toEqual([1, 2]); // the retried one saw the other's commit
    const left = await db.pool.query('select count(*)::int as n from oncall where on_call');
    expect(left.rows[0]).toEqual({ n: 1 });
  });

  it('withTransaction retries the victim of a real deadlock', async () => {
    await db.pool.query('insert into pair values (1, 0), (2, 0)');
    const bothLocked = barrier(2);
    const retries: Error[] = [];
    const bump = (first: number, second: number) =>
      withTransaction(
        db.pool,
        async (tx) => {
          await tx.query('update pair set n = n + 1 where id = $1', [first]);
          await bothLocked();
          await tx.query('update pair set n = n + 1 where id = $1', [second]);
        },
        { onRetry: (e) => retries.push(e) },
      );
    await Promise.all([bump(1, 2), bump(2, 1)]);
    expect(retries.length).toBeGreaterThanOrEqual(1);
    for (const e of retries) expect(e).toBeInstanceOf(DeadlockDetected);
    const rows = await db.pool.query('select id, n from pair order by id');
    expect(rows.rows).toEqual([
      { id: 1, n: 2 },
      { id: 2, n: 2 },
    ]);
  });
});
