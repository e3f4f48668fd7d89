import type pg from 'pg';
import { PROJECTION_DRIFT_SQL } from '../../bench/projection-drift.js';
import { reconcileCheck } from '../../bench/reconcile-check.js';
import { TALLY_BIN } from './app.js';
import { check, expectedCharge, type Check } from './checks.js';
import { TOP_UP, type SteadyLoad } from './load.js';
import { formatMicros, parseMicros } from './money.js';
import { LISTENING_WORKERS_SQL } from './tally-fleet.js';
import { FIRST_CREDIT, type World } from './world.js';

/**
 * The money as a whole after the failover: every wallet, through the API as its tenant
 * sees it, at its credits minus the prices of its jobs; the ledger's own invariants;
 * nothing dead-lettered; `tally reconcile` clean; and the workers back on the primary.
 */

export async function walletsMatch(world: World, load: SteadyLoad): Promise<Check> {
  const problems: string[] = [];
  for (const tenant of world.tenants) {
    const credited = parseMicros(FIRST_CREDIT) + BigInt(load.credits.filter((c) => c.tenant === tenant).length) * parseMicros(TOP_UP);
    const charged = load.jobs.filter((j) => j.tenantId === tenant.id).reduce((sum, j) => sum + expectedCharge(j), 0n);
    const expected = formatMicros(credited - charged);
    const answer = await tenant.call('GET', `/v1/wallets/${tenant.walletId}`);
    const { balance, reserved, available } = answer.body ?? {};
    if (answer.status !== 200 || balance !== expected || reserved !== formatMicros(0n) || available !== expected) {
      problems.push(
        `${tenant.walletId}: ${answer.status} balance ${balance}, reserved ${reserved}, available ${available}; expected ${expected}, 0`,
      );
    }
  }
  return check(
    'every wallet: balance = credits − Σ prices of its jobs, nothing reserved (GET /v1/wallets)',
    problems,
    `${world.tenants.length} wallets`,
  );
}

export async function ledgerInvariants(db: pg.Pool): Promise<Check[]> {
  const drifted = await db.query<{ id: string }>(PROJECTION_DRIFT_SQL);
  const unbalanced = await db.query<{ currency: string }>(
    `select currency from accounts group by currency
     having sum(credits_posted - debits_posted) <> 0 or sum(debits_pending) <> sum(credits_pending)`,
  );
  const dead = await db.query<{ event_key: string }>("select event_key from webhook_events where state = 'dead'");
  return [
    check(
      'account projections = sums of their ledger entries',
      drifted.rows.map((r) => `account ${r.id}`),
      'every account',
    ),
    check(
      'every currency sums to zero (posted and pending)',
      unbalanced.rows.map((r) => r.currency),
      'USD',
    ),
    check(
      'nothing dead-lettered',
      dead.rows.map((r) => r.event_key),
      '0 dead letters',
    ),
  ];
}

export async function workersOnPrimary(db: pg.Pool): Promise<Check> {
  const n = (await db.query<{ n: number }>(LISTENING_WORKERS_SQL)).rows[0]!.n;
  return check('both tally workers listen on the new primary', n >= 2 ? [] : [`${n} listening`], `${n} listening`);
}

/** `tally reconcile --json` on the formation's URL, as an operator runs it: exit 0 when clean. */
export async function reconcileClean(databaseUrl: string): Promise<Check> {
  return reconcileCheck(TALLY_BIN, databaseUrl);
}
