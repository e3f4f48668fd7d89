import { afterAll, describe, expect, it } from 'vitest';
import { ProviderCache } from '../../src/catalog/provider-cache.js';
import { statementCount } from '../../src/db/statement-count.js';
import { freshDatabase } from '../support/database.js';
import { TEST_SERVER_SECRET, uniqueName } from '../support/fixtures.js';
import { waitUntil } from '../support/server.js';

/**
 * Intake's providers in memory (src/catalog/provider-cache.ts): read once, then served
 * without a statement while the cache listens to providers_changed; any change, even by
 * SQL by hand, is seen without a restart; nothing is cached while the listener is away.
 */
const db = await freshDatabase({ max: 4 });
const cache = new ProviderCache(db.pool, db.url, TEST_SERVER_SECRET, 50);
await cache.start();
afterAll(() => cache.stop());

const SECRET_A = 'whsec_c2VjcmV0LWE=';
const SECRET_B = 'whsec_c2VjcmV0LWI=';

async function ensureProvider(pool: typeof db.pool, { name, secrets }: { name: string; secrets: string[] }): Promise<void> {
  await pool.query(`insert into providers (name, kind, secrets) values ($1, 'generic', $2)`, [name, secrets]);
}

/** Waits until `name` is answered from memory (the notification of its own insert has come and gone). */
async function cached(name: string): Promise<void> {
  await waitUntil(async () => {
    await cache.find(name);
    return (await statementsDuring(() => cache.find(name))) === 0;
  });
}

/** Statements this process sent while `run` ran (the counter is the driver's, process-wide). */
async function statementsDuring(run: () => Promise<unknown>): Promise<number> {
  const before = statementCount.statements;
  await run();
  return statementCount.statements - before;
}

describe('the provider cache', () => {
  it('reads a provider once, then answers from memory', async () => {
    const name = uniqueName('cached');
    await ensureProvider(db.pool, { name, secrets: [SECRET_A] });
    expect((await cache.find(name))?.secrets).toEqual([SECRET_A]);
    await cached(name);
    expect(await statementsDuring(() => cache.find(name))).toBe(0);
  });

  it('drops everything at a change made by hand in SQL: the next delivery verifies with the new secrets', async () => {
    const name = uniqueName('rotated');
    await ensureProvider(db.pool, { name, secrets: [SECRET_A] });
    await cached(name);
    expect((await cache.find(name))?.secrets).toEqual([SECRET_A]);
    await db.pool.query('update providers set secrets = $2 where name = $1', [name, [SECRET_B]]);
    await waitUntil(async () => (await cache.find(name))?.secrets[0] === SECRET_B);
    await cached(name);
    expect((await cache.find(name))?.secrets).toEqual([SECRET_B]);
  });

  it('forgets at once when this process says it changed a provider', async () => {
    const name = uniqueName('patched');
    await ensureProvider(db.pool, { name, secrets: [SECRET_A] });
    await cached(name);
    cache.changed();
    expect(await statementsDuring(() => cache.find(name))).toBe(1);
  });

  it('never caches a name that finds no provider', async () => {
    const name = uniqueName('nobody');
    expect(await cache.find(name)).toBeNull();
    expect(await statementsDuring(() => cache.find(name))).toBe(1);
  });

  it('reads the table at every call while its notification connection is lost, and caches again once it is back', async () => {
    const name = uniqueName('unheard');
    await ensureProvider(db.pool, { name, secrets: [SECRET_A] });
    await cached(name);
    const killed = await db.pool.query(
      `select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name = 'tally-serve-listen'`,
    );
    expect(killed.rowCount).toBe(1);
    // Lost: a change now would not be heard, so nothing is served from memory.
    await waitUntil(async () => (await statementsDuring(() => cache.find(name))) === 1);
    await db.pool.query('update providers set secrets = $2 where name = $1', [name, [SECRET_B]]);
    expect((await cache.find(name))?.secrets).toEqual([SECRET_B]);
    // Back (it retries every 50 ms here): cached again.
    await cached(name);
    expect((await cache.find(name))?.secrets).toEqual([SECRET_B]);
  });
});
