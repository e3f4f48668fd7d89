import { afterAll, describe, expect, it } from 'vitest';
import { ConnectionLost, ServerReadOnly } from '../../src/db/errors.js';
import { newClient, selectorFor } from '../../src/db/host-selection.js';
import { migrate } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { withTransaction } from '../../src/db/transaction.js';
import { freshDatabase } from '../support/database.js';
import { freePort, waitUntil } from '../support/server.js';

/**
 * A multi-host DATABASE_URL against the suite's one server: a host that refuses
 * connections before it, and one after. (test/ha/failover.test.ts runs a real primary
 * and standby.)
 */
const db = await freshDatabase({ max: 2 });
const real = new URL(db.url);
const closed = await freePort();
const multiHost = (hosts: string, attrs = 'read-write') =>
  `postgres://${real.username}:${real.password}@${hosts}${real.pathname}?target_session_attrs=${attrs}`;
const realHost = `${real.hostname}:${real.port}`;
const pools: ReturnType<typeof createPool>[] = [];
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
});

describe('a multi-host DATABASE_URL', () => {
  it('connects the pool, its transactions, migrations and LISTEN to the host that accepts writes', async () => {
    const url = multiHost(`127.0.0.1:${closed},${realHost}`);
    const pool = createPool(url, { max: 3 });
    pools.push(pool);
    const rows = await withTransaction(pool, async (tx) => (await tx.query<{ port: number }>('select inet_server_port() as port')).rows);
    expect(rows[0]!.port).toBe(Number(real.port));
    // Many connections at once share one search, and all land on the same host.
    const ports = await Promise.all(Array.from({ length: 6 }, () => pool.query<{ port: number }>('select inet_server_port() as port')));
    expect(new Set(ports.map((r) => r.rows[0]!.port))).toEqual(new Set([Number(real.port)]));
    expect(await migrate(pool)).toEqual([]);

    const listener = newClient(url, { application_name: 'ha-listen' });
    listener.on('error', () => {});
    await listener.connect();
    const notified = new Promise<string | undefined>((resolve) => listener.on('notification', (n) => resolve(n.payload)));
    await listener.query('listen ha_test');
    await pool.query("select pg_notify('ha_test', 'hello')");
    expect(await notified).toBe('hello');
    await listener.end();
  });

  it('checks a connection from what the server reports at startup: no query before the first of ours', async () => {
    const url = multiHost(`127.0.0.1:${closed},${realHost}`);
    const client = newClient(url, { application_name: 'ha-no-round-trip' });
    client.on('error', () => {});
    await client.connect();
    try {
      const seen = await db.pool.query<{ query: string }>('select query from pg_stat_activity where pid = $1', [
        (client as unknown as { processID: number }).processID,
      ]);
      expect(seen.rows).toEqual([{ query: '' }]);
    } finally {
      await client.end();
    }
  });

  it('forgets the chosen host when it drops its sessions (57P01), and the next connection looks again', async () => {
    const url = multiHost(`${realHost},127.0.0.1:${closed}`);
    const pool = createPool(url, { max: 1, applicationName: 'ha-terminated' });
    pools.push(pool);
    await pool.query('select 1');
    const selector = selectorFor(url)!;
    expect(selector.chosen).toEqual({ host: real.hostname, port: Number(real.port) });
    await db.pool.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'ha-terminated'`);
    await waitUntil(() => selector.chosen === null);
    const again = await pool.query<{ ok: number }>('select 1 as ok');
    expect(again.rows[0]!.ok).toBe(1);
    expect(selector.chosen).toEqual({ host: real.hostname, port: Number(real.port) });
  });

  it('a write refused as read-only (25006) is a lost connection: the client is discarded and the host looked for again', async () => {
    const url = multiHost(`${realHost},127.0.0.1:${closed}`, 'primary');
    const pool = createPool(url, { max: 1 });
    pools.push(pool);
    const selector = selectorFor(url)!;
    const error = await withTransaction(pool, async (tx) => {
      await tx.query('set transaction read only');
      await tx.query('create table ha_read_only_probe (id int)');
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerReadOnly);
    expect(error).toBeInstanceOf(ConnectionLost);
    expect(selector.chosen).toBeNull();
    expect(pool.totalCount).toBe(0);
    expect((await pool.query<{ ok: number }>('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
  });

  it('says which hosts it tried and why when none answers, as a lost connection (503, retried)', async () => {
    const other = await freePort();
    const pool = createPool(multiHost(`127.0.0.1:${closed},127.0.0.1:${other}`), { max: 1 });
    pools.push(pool);
    const error = await pool.query('select 1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionLost);
    expect((error as Error).message).toMatch(
      new RegExp(`127\\.0\\.0\\.1:${closed} does not answer \\(ECONNREFUSED\\); 127\\.0\\.0\\.1:${other} does not answer`),
    );
  });

  it('leaves a single-host URL to node-postgres as it is', () => {
    const pool = createPool(db.url, { max: 1 });
    pools.push(pool);
    expect((pool.options as { Client?: unknown }).Client).toBeUndefined();
    expect(pool.options.connectionString).toBe(db.url);
  });
});
