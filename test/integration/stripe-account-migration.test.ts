import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { fileDatabase, migrateBefore } from '../support/older-schema.js';

/**
 * Migration 0027 on Stripe events received before it (issue 33, item 7): one naming a
 * Stripe `account` (Connect) and not applied yet — pending, or claimed by a worker of the
 * previous version — is refused (connect_account_refused) with its claim cleared, so no
 * worker applies it after the upgrade; the platform's own events, settled ones, and bytes
 * PostgreSQL cannot read as JSON are left as they were.
 */
const pool = await fileDatabase('tally_stripe_account');
await migrateBefore(pool, 27);

async function received(id: string, state: string, payload: string | Buffer, claimed = false): Promise<void> {
  const bytes = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  await pool.query(
    `insert into stripe_events (id, type, livemode, object_id, payload, payload_hash, stripe_created, state, lease_until, fencing_token)
     values ($1, 'payment_intent.succeeded', false, 'pi_1', $2, $3, now(), $4, $5, $6)`,
    [id, bytes, createHash('sha256').update(bytes).digest(), state, claimed ? new Date(Date.now() + 60_000) : null, claimed ? 7 : null],
  );
}

const event = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id, object: 'event', type: 'payment_intent.succeeded', livemode: false, data: { object: { id: 'pi_1', account: 'acct_inner' } }, ...extra });

describe('migration 0027', () => {
  it('refuses the pending and claimed events naming an account, and only those', async () => {
    await received('evt_connect', 'pending', event('evt_connect', { account: 'acct_1Attacker' }));
    await received('evt_claimed', 'processing', event('evt_claimed', { account: 'acct_1Attacker' }), true);
    await received('evt_platform', 'pending', event('evt_platform')); // data.object.account is not the event's
    await received('evt_null', 'pending', event('evt_null', { account: null }));
    await received('evt_applied', 'applied', event('evt_applied', { account: 'acct_1Attacker' }));
    await received('evt_unreadable', 'pending', Buffer.from('{"account":"acct_x","bad":"\\u0000"}'));

    await migrate(pool);

    const rows = await pool.query<{ id: string; state: string; reason: string | null; lease_until: Date | null; fencing_token: string | null }>(
      'select id, state, reason, lease_until, fencing_token from stripe_events order by id',
    );
    expect(rows.rows).toEqual([
      { id: 'evt_applied', state: 'applied', reason: null, lease_until: null, fencing_token: null },
      { id: 'evt_claimed', state: 'refused', reason: 'connect_account_refused', lease_until: null, fencing_token: null },
      { id: 'evt_connect', state: 'refused', reason: 'connect_account_refused', lease_until: null, fencing_token: null },
      { id: 'evt_null', state: 'pending', reason: null, lease_until: null, fencing_token: null },
      { id: 'evt_platform', state: 'pending', reason: null, lease_until: null, fencing_token: null },
      { id: 'evt_unreadable', state: 'pending', reason: null, lease_until: null, fencing_token: null },
    ]);
    const settings = await pool.query(`select column_name from information_schema.columns where table_name = 'payment_settings' and column_name = 'account'`);
    expect(settings.rowCount).toBe(1);
  });
});
