import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { NO_TENANT } from '../../src/db/distribution.js';
import { migrate } from '../../src/db/migrate.js';
import { withTransaction } from '../../src/db/transaction.js';
import { newId } from '../../src/ids.js';
import { persistDeliveries } from '../../src/queue/index.js';
import { settle } from '../../src/ledger/settle.js';
import { fileDatabase, reconnected, migrateBefore, migrationsThrough } from '../support/older-schema.js';
import { createWorld, submitWorldJob, type World } from '../support/fixtures.js';
import { distributionProblems } from '../support/citus-catalog.js';
import { ledgerViolations } from '../support/invariants.js';
import { jobDeliveries } from '../support/jobs.js';

/**
 * Migration 0023 (every key of a tenant's table with tenant_id) on rows the code before it
 * wrote: jobs reserved, captured and released with their holds, grants, shares and
 * entries; provider deliveries (a duplicate among them); a tenant's and the admin's
 * Idempotency-Key answers; an outbound message with its delivery and attempt; Stripe's
 * payments (one no grant claims), a refund and a dispute. After it every row is as it was,
 * the new tenant_id of each is its parent's, the catalog is ready for Citus, and the new
 * code carries on over the old rows. A row whose tenant cannot be found stops it first.
 */

const TENANT_KEYS = 23;

const pool = await fileDatabase('tally_tenant_keys');

/** The tables that gain tenant_id (stripe_payments had it, nullable). */
const GAINED = ['delivery_attempts', 'idempotency_keys', 'outbound_deliveries', 'outbound_attempts', 'stripe_refunds', 'stripe_disputes'];

/** Every row of every table, as JSON without tenant_id where it is new, sorted: what must not change. */
async function rows(): Promise<Record<string, string[]>> {
  const tables = await pool.query<{ name: string }>(
    "select tablename as name from pg_tables where schemaname = 'public' and tablename <> 'schema_migrations' order by 1",
  );
  const all: Record<string, string[]> = {};
  for (const { name: table } of tables.rows) {
    const drop = GAINED.includes(table) ? " - 'tenant_id'" : table === 'stripe_payments' ? " - 'tenant_id'" : '';
    const result = await pool.query<{ row: string }>(`select (to_jsonb(t)${drop})::text as row from ${table} t order by 1`);
    all[table] = result.rows.map((r) => r.row);
  }
  return all;
}

/** The events and deliveries intake wrote before 0023, in its statement's shape then. */
async function deliver(job: { id: string; tenant_id: string; provider: string }, eventKey: string, duplicate: boolean): Promise<void> {
  await withTransaction(pool, async (tx) => {
    const seq = await tx.query<{ event_seq: string }>('update jobs set event_seq = event_seq + 1 where id = $1 returning event_seq', [
      job.id,
    ]);
    const payload = Buffer.from(eventKey);
    await tx.query(
      `insert into webhook_events (provider, event_key, tenant_id, job_id, seq, type, payload_hash, payload, event, state)
       values ($1, $2, $3, $4, $5, 'job.completed', sha256($6), $6, '{"type":"job.completed"}', 'applied')`,
      [job.provider, eventKey, job.tenant_id, job.id, seq.rows[0]!.event_seq, payload],
    );
    for (const outcome of duplicate ? ['accepted', 'already_accepted'] : ['accepted']) {
      await tx.query(
        `insert into delivery_attempts (id, provider, event_key, job_id, outcome, payload_hash) values ($1, $2, $3, $4, $5, sha256($6))`,
        [newId(), job.provider, eventKey, job.id, outcome, payload],
      );
    }
  });
}

/** What the old code wrote for the admin, a tenant, outbound webhooks and Stripe, in plain SQL. */
async function populateOthers(world: World, other: World): Promise<void> {
  const key = (principal: string, path: string) =>
    pool.query(
      `insert into idempotency_keys (principal, method, route, path, key, request_hash, response_status, response_body)
       values ($1, 'POST', $2, $2, $3, '\\x00', 201, '{}')`,
      [principal, path, randomBytes(8).toString('hex')],
    );
  await key(`tenant:${world.tenantId}`, '/v1/jobs');
  await key('admin', '/v1/tenants');
  const endpoint = newId();
  const message = `msg_${newId()}`;
  await pool.query(
    `insert into webhook_endpoints (id, tenant_id, url, events, secret) values ($1, $2, 'https://example.com/hook', '{*}', 'whsec_x')`,
    [endpoint, other.tenantId],
  );
  await pool.query(`insert into outbound_messages (id, tenant_id, type, payload) values ($1, $2, 'job.settled', '{}')`, [
    message,
    other.tenantId,
  ]);
  const delivery = await pool.query<{ id: string }>(
    'insert into outbound_deliveries (message_id, endpoint_id) values ($1, $2) returning id',
    [message, endpoint],
  );
  await pool.query(
    `insert into outbound_attempts (id, delivery_id, endpoint_id, started_at, status, latency_ms) values ($1, $2, $3, now(), 200, 5)`,
    [newId(), delivery.rows[0]!.id, endpoint],
  );
  const grant = await pool.query<{ id: string }>('select id from grants where wallet_id = $1', [other.wallet.id]);
  const grantId = grant.rows[0]!.id;
  await pool.query(
    `insert into stripe_payments (payment_intent, outcome, grant_id, tenant_id, wallet_id, amount_minor, currency)
     values ('pi_ours', 'activated', $1, $2, $3, 100, 'usd'), ('pi_stranger', 'no_grant', null, null, null, 50, 'usd')`,
    [grantId, other.tenantId, other.wallet.id],
  );
  await pool.query(
    `insert into stripe_refunds (refund_id, payment_intent, grant_id, amount_minor, status) values ('re_1', 'pi_ours', $1, 10, 'pending')`,
    [grantId],
  );
  await pool.query(
    `insert into stripe_disputes (dispute_id, payment_intent, grant_id, amount_minor, status) values ('dp_1', 'pi_ours', $1, 10, 'open')`,
    [grantId],
  );
}

async function tenantsOf(sql: string): Promise<unknown[]> {
  return (await pool.query(sql)).rows;
}

describe('migration 0023 on rows written before it', () => {
  it("keeps every row, gives each new tenant_id its parent row's, and the code carries on", { timeout: 120_000 }, async () => {
    await migrateBefore(pool, TENANT_KEYS);
    // Today's code writes the ledger (credits, reservations, settlements): its outbox
    // statement names outbound_deliveries.tenant_id, so the column exists (empty: no
    // endpoint listens yet) while it runs, and is gone again before the migration.
    await pool.query('alter table outbound_deliveries add column tenant_id uuid');
    const world = await createWorld(pool, { funds: 1_000_000n });
    const other = await createWorld(pool, { funds: 1_000_000n });
    const captured = await submitWorldJob(pool, world);
    const released = await submitWorldJob(pool, world);
    const open = await submitWorldJob(pool, other);
    const later = await submitWorldJob(pool, other);
    await settle(pool, { jobId: captured.id, event: { type: 'job.completed', usage: { input_tokens: 100, output_tokens: 10 } } });
    await settle(pool, { jobId: released.id, event: { type: 'job.failed' } });
    await pool.query('alter table outbound_deliveries drop column tenant_id');
    await deliver(captured, `evt_${newId()}`, true);
    await deliver(released, `evt_${newId()}`, false);
    await populateOthers(world, other);

    // A delivery whose tenant nothing names stops the migration, which applies nothing.
    await pool.query(
      `insert into delivery_attempts (id, provider, event_key, outcome, payload_hash) values ($1, 'nobody', 'evt_x', 'event_mismatch', '\\x00')`,
      [newId()],
    );
    await expect(migrate(pool)).rejects.toThrow(/1 row\(s\) of delivery_attempts have no tenant to be found/);
    expect((await pool.query('select 1 from schema_migrations where version = $1', [TENANT_KEYS])).rowCount).toBe(0);
    await pool.query(`delete from delivery_attempts where provider = 'nobody'`);

    const before = await rows();
    // 0023 alone (later migrations change rows of their own: 0026 drops the accepted
    // attempts), then whatever later migrations the checkout has.
    expect(await migrate(pool, undefined, { dir: await migrationsThrough(TENANT_KEYS) })).toEqual([expect.stringMatching(/^0023_/)]);
    expect(await rows()).toEqual(before);

    // Each new tenant_id is its parent row's; the admin's and a stranger's payment are NO_TENANT.
    expect(await tenantsOf(`select 1 from delivery_attempts a join jobs j on j.id = a.job_id where a.tenant_id <> j.tenant_id`)).toEqual(
      [],
    );
    expect(await tenantsOf('select count(*)::int as n from delivery_attempts')).toEqual([{ n: 3 }]);
    expect(await tenantsOf(`select principal, tenant_id from idempotency_keys order by principal`)).toEqual([
      { principal: 'admin', tenant_id: NO_TENANT },
      { principal: `tenant:${world.tenantId}`, tenant_id: world.tenantId },
    ]);
    expect(
      await tenantsOf('select distinct tenant_id from outbound_deliveries union all select distinct tenant_id from outbound_attempts'),
    ).toEqual([{ tenant_id: other.tenantId }, { tenant_id: other.tenantId }]);
    expect(await tenantsOf('select payment_intent, tenant_id from stripe_payments order by 1')).toEqual([
      { payment_intent: 'pi_ours', tenant_id: other.tenantId },
      { payment_intent: 'pi_stranger', tenant_id: NO_TENANT },
    ]);
    expect(await tenantsOf('select tenant_id from stripe_refunds union all select tenant_id from stripe_disputes')).toEqual([
      { tenant_id: other.tenantId },
      { tenant_id: other.tenantId },
    ]);
    // The later migrations; the catalog is ready for Citus after them too.
    await migrate(pool);
    expect(await distributionProblems(pool)).toEqual([]);
    const fresh = reconnected(pool);

    // The new code over the old rows: a hold reserved before is captured, one released; a
    // repeat of an old event is recorded with its tenant; the ledger's invariants hold.
    const result = await settle(fresh, { jobId: open.id, event: { type: 'job.completed', usage: { input_tokens: 10 } } });
    expect(result.jobState).toBe('captured');
    expect((await settle(fresh, { jobId: later.id, event: { type: 'job.failed' } })).jobState).toBe('released');
    const old = (
      await fresh.query<{ provider: string; event_key: string }>('select provider, event_key from webhook_events where job_id = $1', [
        captured.id,
      ])
    ).rows[0]!;
    await persistDeliveries(
      fresh,
      [],
      [
        {
          id: newId(),
          provider: old.provider,
          eventKey: old.event_key,
          jobId: captured.id,
          outcome: 'already_accepted',
          payloadHash: Buffer.alloc(32),
          detail: null,
        },
      ],
    );
    // Its deliveries: the old event (its accepted attempt gone with 0026), the old repeat
    // and this one, both attempts of the job's tenant.
    expect((await jobDeliveries(fresh, captured.id)).map((d) => [d.event_key, d.outcome])).toEqual([
      [old.event_key, 'accepted'],
      [old.event_key, 'already_accepted'],
      [old.event_key, 'already_accepted'],
    ]);
    expect(await tenantsOf(`select tenant_id from delivery_attempts where job_id = '${captured.id}' order by received_at`)).toEqual(
      Array(2).fill({ tenant_id: world.tenantId }),
    );
    expect(await ledgerViolations(fresh)).toEqual({});
  });
});
