import { describe, expect, it } from 'vitest';
import { findProvider, type ProviderRow } from '../../src/catalog/providers.js';
import type { ProviderLookup } from '../../src/catalog/provider-cache.js';
import { receiveWebhook } from '../../src/intake/receive.js';
import { freshDatabase } from '../support/database.js';
import { createWorld, submitWorldJob } from '../support/fixtures.js';
import { signDelivery } from '../support/client.js';

/**
 * Intake's second look (src/intake/receive.ts): a provider held in memory can predate a
 * rotation another process just committed, whose notification has not arrived yet. A
 * signature the held secrets refuse is checked again against the provider as the table
 * has it — the new secret passes — and refused only when that changes nothing.
 */
const db = await freshDatabase({ max: 4 });
const NEW_SECRET = 'whsec_bmV3LXNlY3JldC1hZnRlci1yb3RhdGlvbg==';

/** A lookup holding `held` (what a cache read before the rotation); rereads go to the table. */
function holding(held: ProviderRow, rereads: { count: number }): ProviderLookup {
  return {
    find: async () => held,
    changed: () => {},
    reread: async (name) => {
      rereads.count++;
      return findProvider(db.pool, name);
    },
  };
}

async function rotatedWorld() {
  const world = await createWorld(db.pool, { funds: 10_000_000n });
  const job = await submitWorldJob(db.pool, world);
  const held = (await findProvider(db.pool, world.provider.name))!;
  // Another process adds the new secret: this one still holds the old row.
  await db.pool.query('update providers set secrets = secrets || $2::text[] where name = $1', [world.provider.name, [NEW_SECRET]]);
  const body = { type: 'job.started', timestamp: new Date().toISOString(), data: { job_id: job.id, tenant_id: world.tenantId } };
  return { world, held, body };
}

describe('a provider held in memory from before a rotation', () => {
  it('accepts a delivery signed with the secret added meanwhile, after one read of the table', async () => {
    const { world, held, body } = await rotatedWorld();
    const signed = signDelivery(body, { secret: NEW_SECRET });
    const rereads = { count: 0 };
    const result = await receiveWebhook(db.pool, holding(held, rereads), world.provider.name, Buffer.from(signed.body), signed.headers);
    expect(result.status).toBe('accepted');
    expect(rereads.count).toBe(1);
  });

  it('still refuses a forgery, and verifies it only once more when the table says the same', async () => {
    const { world, held, body } = await rotatedWorld();
    const forged = signDelivery(body, { secret: 'whsec_bm90LXRoZS1wcm92aWRlcnMtc2VjcmV0' });
    const rereads = { count: 0 };
    await expect(
      receiveWebhook(db.pool, holding(held, rereads), world.provider.name, Buffer.from(forged.body), forged.headers),
    ).rejects.toMatchObject({ status: 401, code: 'invalid_signature' });
    expect(rereads.count).toBe(1);
    const stored = await db.pool.query('select 1 from webhook_events where provider = $1', [world.provider.name]);
    expect(stored.rowCount).toBe(0);
  });
});
