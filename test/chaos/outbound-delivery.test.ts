import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/transaction.js';
import { enqueueMessages, type NewMessage } from '../../src/outbound/enqueue.js';
import { Random } from '../../src/simulator/index.js';
import { chaosSeed, printSummary } from '../support/chaos-world.js';
import { Client } from '../support/client.js';
import { freshDatabase } from '../support/database.js';
import { Fleet, type FleetProcess } from '../support/fleet.js';
import { waitUntil } from '../support/server.js';
import { WebhookReceiver, type Received } from '../support/webhook-receiver.js';

/**
 * Outbound webhooks under failure: the receiver answers 500 about half the time, sometimes
 * never answers (the delivery times out), and is down (connection refused) for a while;
 * the delivery workers (`tally worker` processes) are SIGKILLed at random instants and
 * restarted. Messages are written by enqueueMessages in transactions that commit, and in
 * transactions that roll back. Afterwards every committed message reached every endpoint
 * subscribed to it at least once, no rolled-back message exists or was sent, and every
 * request the receiver got verifies with its endpoint's secret.
 */
const SEED = chaosSeed();
const TENANTS = 4;
const ROUNDS = 12;
const WORKERS = 3;
const MIN_KILLS = 8;
/** A kill 200–900 ms after a started worker is available to kill (chaos timing, not synchronisation). */
const KILL_GAP_MS = [200, 900] as const;
const ENV = {
  TALLY_OUTBOUND_ALLOW: '127.0.0.1',
  TALLY_OUTBOUND_TIMEOUT_MS: '500',
  TALLY_OUTBOUND_LEASE_SECONDS: '2',
  TALLY_OUTBOUND_BACKOFF_MS: '20',
  TALLY_OUTBOUND_BACKOFF_CAP_MS: '400',
  TALLY_OUTBOUND_CONCURRENCY: '4',
};

const db = await freshDatabase();
const fleet = new Fleet(db.url);
const api = await fleet.server({ name: 'api', workers: 0, env: ENV });
const admin = new Client(api.url);

/** A message of a random type for `tenantId`, with the data its type documents. */
function randomMessage(random: Random, tenantId: string, n: number): NewMessage {
  const wallet = `0190d4c8-0000-7000-8000-${String(n).padStart(12, '0')}`;
  switch (random.int(0, 4)) {
    case 0:
      return {
        tenantId,
        type: 'job.settled',
        data: {
          charge_type: 'capture',
          amount: '0.001200',
          currency: 'USD',
          settlement_key: `${tenantId}:job${n}:capture:1`,
          job: { id: wallet, state: 'captured', wallet_id: wallet, model: 'm1', provider: 'p1' },
        },
      };
    case 1:
      return {
        tenantId,
        type: 'wallet.credited',
        data: { wallet_id: wallet, amount: '10.000000', currency: 'USD', balance: '10.000000', reference: `ref-${n}` },
      };
    case 2:
      return {
        tenantId,
        type: 'wallet.balance_low',
        data: { wallet_id: wallet, currency: 'USD', threshold: '5.000000', available: '4.990000' },
      };
    case 3:
      return { tenantId, type: 'wallet.overdrawn', data: { wallet_id: wallet, currency: 'USD', balance: '-0.010000' } };
    default:
      return { tenantId, type: 'hold.expired', data: { job_id: wallet, wallet_id: wallet, amount: '1.000000', currency: 'USD' } };
  }
}

describe('outbound deliveries under a failing receiver and killed workers', () => {
  it(`delivers every committed message at least once, and no rolled-back one (seed ${SEED})`, { timeout: 240_000 }, async () => {
    const random = new Random(SEED);
    const behaviourRandom = new Random(SEED ^ 0x5eed);
    const receiver = await WebhookReceiver.start(() => {
      const roll = behaviourRandom.next();
      if (roll < 0.1) return 'hang';
      if (roll < 0.55) return { status: 500, body: 'try later' };
      return { status: 200, body: 'ok' };
    });

    // Tenants, each with an endpoint for everything; tenant 0 has a second one for credits only.
    const tenants: { id: string }[] = [];
    const secrets = new Map<string, string>();
    for (let t = 0; t < TENANTS; t++) {
      const created = await admin.post('/v1/tenants', { name: `receiver-${t}` });
      tenants.push({ id: created.body.id });
      const client = admin.as(created.body.api_key);
      const all = await client.post('/v1/webhook-endpoints', { url: `${receiver.url}/t${t}/all`, events: ['*'] });
      expect(all.status).toBe(201);
      secrets.set(`/t${t}/all`, all.body.secret);
    }
    const credits = await admin.post('/v1/webhook-endpoints', {
      url: `${receiver.url}/t0/credited`,
      events: ['wallet.credited'],
      tenant_id: tenants[0]!.id,
    });
    secrets.set('/t0/credited', credits.body.secret);

    const slots: FleetProcess[] = Array.from({ length: WORKERS }, (_, i) =>
      fleet.worker({ name: `worker-${i}`, concurrency: 1, env: ENV }),
    );
    let kills = 0;
    let producing = true;
    const revive = () =>
      slots.forEach((p, i) => {
        if (fleet.diedUnasked(p)) slots[i] = fleet.worker({ name: `worker-${i}`, concurrency: 1, env: ENV });
      });
    const monkey = (async () => {
      while (producing || kills < MIN_KILLS) {
        await waitUntil(() => slots.some((p) => fleet.workerStarted(p)), 60_000);
        await new Promise((resolve) => setTimeout(resolve, random.int(KILL_GAP_MS[0], KILL_GAP_MS[1])));
        revive();
        const candidates = slots.flatMap((p, i) => (fleet.workerStarted(p) ? [i] : []));
        if (candidates.length === 0) continue;
        const victim = random.pick(candidates);
        await fleet.kill(slots[victim]!);
        kills++;
        slots[victim] = fleet.worker({ name: `worker-${victim}`, concurrency: 1, env: ENV });
      }
    })();

    // The producer: committed and rolled-back transactions, in rounds; the receiver is down
    // from round 4 to round 8 (connections refused), whatever the workers are doing then.
    const committed: NewMessage[] = [];
    const committedIds: string[] = [];
    const rolledBackIds: string[] = [];
    let n = 0;
    for (let round = 0; round < ROUNDS; round++) {
      if (round === 4) await receiver.down();
      if (round === 8) await receiver.listen();
      for (let tx = 0; tx < 6; tx++) {
        const batch = Array.from({ length: random.int(1, 4) }, () => randomMessage(random, random.pick(tenants).id, n++));
        if (random.chance(0.25)) {
          await withTransaction(db.pool, async (client) => {
            rolledBackIds.push(...(await enqueueMessages(client, batch)));
            throw new RolledBack();
          }).catch((error) => {
            if (!(error instanceof RolledBack)) throw error;
          });
        } else {
          const ids = await withTransaction(db.pool, (client) => enqueueMessages(client, batch));
          committed.push(...batch);
          committedIds.push(...ids);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, random.int(50, 250)));
    }
    producing = false;
    await monkey;
    revive();

    // Where each committed message must arrive: its tenant's catch-all, and tenant 0's credits endpoint for credits.
    const expected = committed.flatMap((m, i) => {
      const t = tenants.findIndex((x) => x.id === m.tenantId);
      const targets = [`/t${t}/all`, ...(t === 0 && m.type === 'wallet.credited' ? ['/t0/credited'] : [])];
      return targets.map((path) => `${path} ${committedIds[i]}`);
    });
    const arrived = () => new Set(receiver.received.map((r) => `${r.path} ${r.headers['webhook-id']}`));
    // Everything arrived (answered 200 or not: the delivery rows below say which succeeded)…
    await receiver.waitFor(() => {
      const got = arrived();
      return expected.every((key) => got.has(key));
    }, 150_000);
    // …and nothing is left to deliver.
    await waitUntil(async () => {
      const open = await db.pool.query(`select count(*)::int as n from outbound_deliveries where state <> 'delivered'`);
      return open.rows[0]!.n === 0;
    }, 150_000);
    expect(fleet.crashes, 'workers that died unasked').toEqual([]);

    // Every committed message was delivered (2xx) to each endpoint subscribed to it.
    const delivered = await db.pool.query<{ key: string }>(
      `select replace(e.url, $1, '') || ' ' || d.message_id as key
       from outbound_deliveries d join webhook_endpoints e on e.id = d.endpoint_id where d.state = 'delivered'`,
      [receiver.url],
    );
    expect(new Set(delivered.rows.map((r) => r.key))).toEqual(new Set(expected));
    expect(
      [...arrived()].filter((key) => !expected.includes(key)),
      'requests for no committed message',
    ).toEqual([]);

    // Nothing of a rolled-back transaction exists or was sent.
    const ghosts = await db.pool.query('select id from outbound_messages where id = any($1::text[])', [rolledBackIds]);
    expect(ghosts.rows).toEqual([]);
    const rolledBack = new Set(rolledBackIds);
    expect(receiver.received.filter((r) => rolledBack.has(r.headers['webhook-id']!))).toEqual([]);

    // Every request verifies with its endpoint's secret, as a receiver checks it.
    const unverified = receiver.received.filter((r) => {
      try {
        new Webhook(secrets.get(r.path)!).verify(r.body, r.headers);
        return false;
      } catch {
        return true;
      }
    });
    expect(unverified.map((r) => `${r.path} ${r.headers['webhook-id']}`)).toEqual([]);

    const outcomes = await db.pool.query<{ outcome: string; n: number }>(
      `select case when status between 200 and 299 then 'delivered' when status is null then coalesce(substring(error from '^[a-z ]+'), 'no answer') else status::text end as outcome, count(*)::int as n
       from outbound_attempts group by 1 order by 2 desc`,
    );
    printSummary(`outbound delivery (seed ${SEED})`, {
      messages_committed: committedIds.length,
      messages_rolled_back: rolledBackIds.length,
      deliveries_expected: expected.length,
      requests_received: receiver.received.length,
      duplicates: receiver.received.length - arrived().size,
      workers_killed: kills,
      // requests whose attempt was never recorded: sent by a worker killed before it could
      // (its claim lapsed and another worker sent the message again)
      requests_unrecorded:
        receiver.received.length -
        (await db.pool.query(`select count(*)::int as n from outbound_attempts where status is not null or error like 'no answer%'`))
          .rows[0]!.n,
      ...Object.fromEntries(outcomes.rows.map((r) => [`attempts_${r.outcome.trim().replace(/\W+/g, '_')}`, r.n])),
    });
    expect(kills).toBeGreaterThanOrEqual(MIN_KILLS);
    expect(rolledBackIds.length).toBeGreaterThan(0);
  });
});

class RolledBack extends Error {}
