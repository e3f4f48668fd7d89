import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { withTransaction } from '../../src/db/transaction.js';
import { newId } from '../../src/ids.js';
import type { JobRow } from '../../src/jobs/rows.js';
import { persistDeliveries, type NewEvent } from '../../src/queue/index.js';
import { createTenant, createWorld, creditWallet, insertWallet, submitJob, submitWorldJob, LIMITS } from '../support/fixtures.js';
import { fileDatabase, migrateBefore, migrationsThrough } from '../support/older-schema.js';

/**
 * Migration 0029 (a provider's event key claimed across tenants, webhook_event_keys) on
 * events written before it: every event's key is claimed by its event's tenant, and intake
 * then refuses the key to another tenant's job. Keys already held by two tenants' events
 * stop it first, naming the count; nothing is applied and no event is touched.
 */

const EVENT_KEY_CLAIMS = 29;

const pool = await fileDatabase('tally_event_key_claims');

type Job = Pick<JobRow, 'id' | 'tenant_id' | 'provider'>;

const hash = (body: string) => createHash('sha256').update(body).digest();

/** An event as intake wrote it before 0029: numbered under its job, no claim. */
async function writeAsBefore(job: Job, key: string): Promise<void> {
  await withTransaction(pool, async (tx) => {
    const seq = await tx.query<{ event_seq: string }>('update jobs set event_seq = event_seq + 1 where id = $1 returning event_seq', [
      job.id,
    ]);
    await tx.query(
      `insert into webhook_events (provider, event_key, tenant_id, job_id, seq, type, payload_hash, payload, event)
       values ($1, $2, $3, $4, $5, 'job.progress', $6, $7, '{"type":"job.progress"}')`,
      [job.provider, key, job.tenant_id, job.id, seq.rows[0]!.event_seq, hash(`${key}:${job.id}`), Buffer.from(`${key}:${job.id}`)],
    );
  });
}

function newEvent(job: Job, key: string): NewEvent {
  const body = `${key}:${job.id}`;
  return {
    provider: job.provider,
    eventKey: key,
    tenantId: job.tenant_id,
    jobId: job.id,
    type: 'job.progress',
    payloadHash: hash(body),
    payload: Buffer.from(body),
    event: { type: 'job.progress' },
  };
}

const events = async () =>
  (await pool.query('select provider, event_key, tenant_id, job_id, seq from webhook_events order by provider, event_key, tenant_id')).rows;

describe('migration 0029 on events written before it', () => {
  it(
    'claims every event key for its event, refuses it to another tenant after, and stops on a key two tenants hold',
    { timeout: 120_000 },
    async () => {
      await migrateBefore(pool, EVENT_KEY_CLAIMS);
      const world = await createWorld(pool, { funds: 1_000_000n });
      const other = await createTenant(pool);
      const otherWallet = await insertWallet(pool, other);
      await creditWallet(pool, otherWallet, 1_000_000n);
      const mine: Job = await submitWorldJob(pool, world);
      const theirs: Job = await submitJob(pool, {
        tenantId: other,
        wallet: otherWallet,
        provider: world.provider,
        model: world.model,
        limits: { ...LIMITS },
      });

      const keys = { a: `evt_${newId()}`, b: `evt_${newId()}`, c: `evt_${newId()}`, shared1: `evt_${newId()}`, shared2: `evt_${newId()}` };
      await writeAsBefore(mine, keys.a);
      await writeAsBefore(mine, keys.b);
      await writeAsBefore(theirs, keys.c);
      // What the race let through before: one key, both tenants' events (twice).
      for (const key of [keys.shared1, keys.shared2]) {
        await writeAsBefore(mine, key);
        await writeAsBefore(theirs, key);
      }
      const before = await events();
      expect(before).toHaveLength(7);

      // Up to 0029 only, so that what it did is seen before later migrations act.
      const through = { dir: await migrationsThrough(EVENT_KEY_CLAIMS) };
      await expect(migrate(pool, undefined, through)).rejects.toThrow(
        /2 event key\(s\) are held by the events of more than one tenant of their provider \(e\.g\. .*\(2 tenants\).*\(2 tenants\)\)/,
      );
      expect((await pool.query('select 1 from schema_migrations where version = $1', [EVENT_KEY_CLAIMS])).rowCount).toBe(0);
      expect((await pool.query(`select to_regclass('webhook_event_keys') as t`)).rows[0].t).toBeNull();
      expect(await events()).toEqual(before);

      // The operator decides: here the other tenant's events of those keys were the strays.
      await pool.query('delete from webhook_events where tenant_id = $1 and event_key = any($2::text[])', [
        other,
        [keys.shared1, keys.shared2],
      ]);
      expect(await migrate(pool, undefined, through)).toEqual([expect.stringMatching(/^0029_/)]);

      const claims = await pool.query(
        'select provider, event_key, tenant_id from webhook_event_keys order by provider, event_key, tenant_id',
      );
      expect(claims.rows).toEqual((await events()).map(({ provider, event_key, tenant_id }) => ({ provider, event_key, tenant_id })));
      expect(claims.rows).toHaveLength(5);

      // Intake's statement after it (today's, on the schema of every migration): a key
      // claimed before the migration is refused to the other tenant's job (nothing written
      // for it), a new key is claimed with its event.
      await migrate(pool);
      const fresh = `evt_${newId()}`;
      const inserted = await persistDeliveries(pool, [newEvent(theirs, keys.a), newEvent(theirs, fresh)], []);
      expect([...inserted]).toEqual([JSON.stringify([theirs.provider, fresh])]);
      const now = await pool.query<{ event_key: string; tenant_id: string; claimed_by: string }>(
        `select e.event_key, e.tenant_id, k.tenant_id as claimed_by
       from webhook_events e join webhook_event_keys k using (provider, event_key)
       where e.event_key = any($1::text[])`,
        [[keys.a, fresh]],
      );
      expect(new Map(now.rows.map((r) => [r.event_key, r]))).toEqual(
        new Map([
          [keys.a, { event_key: keys.a, tenant_id: mine.tenant_id, claimed_by: mine.tenant_id }],
          [fresh, { event_key: fresh, tenant_id: other, claimed_by: other }],
        ]),
      );
    },
  );
});
