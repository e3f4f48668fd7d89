import type { Pool, Queryable } from '../db/pool.js';
import { PAYMENT_SOURCES, activateGrant, expireGrant } from '../funds/index.js';
import { withTransaction } from '../db/transaction.js';
import type { DecisionLog } from '../ledger/index.js';
import { formatAmount } from '../money/index.js';

/**
 * The grants' two periodic duties (CONTRACT.md "Credit grants"): a grant past its
 * `expires_at` gives its unheld remaining to the breakage account within 10 s, and a
 * scheduled grant whose `effective_at` has come brings its money. Each grant moves in its
 * own short transaction through the ledger's keyed writers (expireGrant, activateGrant),
 * which lock its wallet and post once: a second worker sweeping the same grant at the
 * same moment waits for the wallet's lock and then writes nothing, so the duties need no
 * lock of their own to be exactly-once, and a sweep that dies half-way leaves only what
 * the next one takes.
 *
 * A sweep walks the due grants in batches, in the order they fell due, each batch
 * starting after the last grant of the one before — a grant that moved nothing (taken by
 * another sweep meanwhile) is not read again — until none is due or its time is up.
 */

/** Grants one statement of a sweep reads. */
const SWEEP_BATCH = 200;
/** Grants moved at once, each on its own connection of the pool (grants of one wallet wait for each other). */
const SWEEP_LANES = 2;
/**
 * How long one run of a duty goes on (the next run, an interval later, takes the rest):
 * a worker runs its duties one after another, so a long sweep must not hold up the
 * cancel grace or the hold-expiry flags behind it.
 */
export const GRANT_SWEEP_BUDGET_MS = 4_000;

/** A grant a sweep takes on. */
export interface DueGrant {
  id: string;
  walletId: string;
  tenantId: string;
  currency: string;
  /** expires_at for the expiry sweep, effective_at for the activation */
  dueAt: Date;
  /** the same instant to the microsecond (a Date keeps milliseconds): where the next batch starts */
  dueMicros: string;
}

export interface SweepOptions {
  /** stop starting new grants after this long (default: sweep until none is due) */
  budgetMs?: number;
  /** grants moved at once (default 2) */
  lanes?: number;
  log?: Pick<DecisionLog, 'info' | 'warn'>;
  /** told of each grant whose transaction failed (the sweep goes on with the others) */
  onFailed?: (grant: DueGrant, error: unknown) => void;
}

export interface SweepResult {
  /** grants whose movement this sweep posted */
  moved: number;
  /** grants another sweep had moved, or that were not due after all */
  skipped: number;
  /** grants whose transaction failed (logged; the next sweep tries again) */
  failed: number;
  /** false when the budget ran out with grants still due */
  complete: boolean;
}

/**
 * Expires every grant past its expires_at whose expiry has not posted (the index
 * grants_expiry_due_idx). A grant that never activated (awaiting payment, canceled) has
 * nothing to lapse and is left out. `onExpired` is told of each expiry this sweep posted,
 * with what lapsed (0 when everything left was held for jobs).
 */
export async function expireDueGrants(
  pool: Pool,
  options: SweepOptions & { onExpired?: (grant: DueGrant, lapsed: bigint) => void } = {},
): Promise<SweepResult> {
  return sweep(pool, options, selectExpiryDue, async (grant) => {
    const lapsed = await withTransaction(pool, (tx) => expireGrant(tx, grant.id));
    if (lapsed === null) return false;
    options.log?.info(
      { grant_id: grant.id, wallet_id: grant.walletId, tenant_id: grant.tenantId, currency: grant.currency, lapsed: formatAmount(lapsed) },
      'grant expired',
    );
    options.onExpired?.(grant, lapsed);
    return true;
  });
}

/** Activates every scheduled grant whose effective_at has come (not voided, not canceled, not a payment's). */
export async function activateDueGrants(pool: Pool, options: SweepOptions = {}): Promise<SweepResult> {
  return sweep(pool, options, selectActivationDue, async (grant) => {
    const outcome = await withTransaction(pool, (tx) => activateGrant(tx, grant.id));
    if (outcome === 'balance_limit')
      options.log?.warn(
        { grant_id: grant.id, wallet_id: grant.walletId, tenant_id: grant.tenantId },
        "grant not activated: its money would take the wallet's balance past the largest Tally keeps; it stays scheduled",
      );
    const activated = outcome === 'activated';
    if (activated) options.log?.info({ grant_id: grant.id, wallet_id: grant.walletId, tenant_id: grant.tenantId }, 'grant activated');
    return activated;
  });
}

/** How many grants the expiry sweep would take on now (for a progress display). */
export async function countExpiryDue(db: Queryable): Promise<number> {
  const result = await db.query<{ n: number }>(
    `select count(*)::int as n from grants
     where expires_at is not null and expiry_posted_at is null and expires_at <= now() and activated_at is not null`,
  );
  return result.rows[0]!.n;
}

/** Where the walk goes on: after this grant's due instant (microseconds since the epoch, exact) and id. */
type After = { micros: string; id: string } | null;
type Select = (db: Queryable, after: After, limit: number) => Promise<DueGrant[]>;

async function sweep(pool: Pool, options: SweepOptions, select: Select, move: (grant: DueGrant) => Promise<boolean>): Promise<SweepResult> {
  const started = Date.now();
  const outOfTime = () => options.budgetMs !== undefined && Date.now() - started >= options.budgetMs;
  const result: SweepResult = { moved: 0, skipped: 0, failed: 0, complete: true };
  let after: After = null;
  for (;;) {
    const batch = await select(pool, after, SWEEP_BATCH);
    if (batch.length === 0) return result;
    let next = 0;
    const lane = async () => {
      while (next < batch.length && !outOfTime()) {
        const grant = batch[next++]!;
        try {
          if (await move(grant)) result.moved++;
          else result.skipped++;
        } catch (error) {
          // One grant that cannot move (a lost connection, a bug) does not hold up the rest.
          result.failed++;
          options.onFailed?.(grant, error);
          options.log?.warn(
            { err: error, grant_id: grant.id, wallet_id: grant.walletId },
            'grant duty failed for a grant; the next run tries again',
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.lanes ?? SWEEP_LANES, batch.length) }, lane));
    if (next < batch.length || (batch.length === SWEEP_BATCH && outOfTime())) {
      result.complete = false;
      return result;
    }
    if (batch.length < SWEEP_BATCH) return result;
    const last = batch[batch.length - 1]!;
    after = { micros: last.dueMicros, id: last.id };
  }
}

interface DueRow {
  id: string;
  wallet_id: string;
  tenant_id: string;
  currency: string;
  due_at: Date;
  due_micros: string;
}

const dueGrant = (row: DueRow): DueGrant => ({
  id: row.id,
  walletId: row.wallet_id,
  tenantId: row.tenant_id,
  currency: row.currency,
  dueAt: row.due_at,
  dueMicros: row.due_micros,
});

const MICROS = (column: string) => `(extract(epoch from ${column}) * 1000000)::bigint::text`;
/** The instant of `after`, exact: epoch + microseconds (no floating point on the way). */
const AFTER_INSTANT = `(timestamptz 'epoch' + $1::bigint * interval '1 microsecond')`;

/**
 * Grants past expires_at with their expiry not posted, oldest first, after `after`
 * (expires_at, id): a walk of grants_expiry_due_idx. `now()` is the statement's instant;
 * expireGrant decides again under the wallet's lock, on the clock of its own transaction.
 */
async function selectExpiryDue(db: Queryable, after: After, limit: number): Promise<DueGrant[]> {
  const result = await db.query<DueRow>({
    name: 'select_grants_expiry_due',
    text: `select id, wallet_id, tenant_id, currency, expires_at as due_at, ${MICROS('expires_at')} as due_micros from grants
      where expires_at is not null and expiry_posted_at is null and expires_at <= now() and activated_at is not null
        and ($1::bigint is null or (expires_at, id) > (${AFTER_INSTANT}, $2::uuid))
      order by expires_at, id limit $3`,
    values: [after?.micros ?? null, after?.id ?? null, limit],
  });
  return result.rows.map(dueGrant);
}

/**
 * Scheduled grants whose effective_at has come, earliest first, after `after`. Never a
 * payment's (PAYMENT_SOURCES): its money has not been taken until the processor says so,
 * and its payment's success activates it. The partial index grants_activation_due_idx
 * (migrations/0021) holds exactly the grants not yet active, in this walk's order.
 */
async function selectActivationDue(db: Queryable, after: After, limit: number): Promise<DueGrant[]> {
  const result = await db.query<DueRow>({
    name: 'select_grants_activation_due',
    text: `select id, wallet_id, tenant_id, currency, effective_at as due_at, ${MICROS('effective_at')} as due_micros from grants
      where activated_at is null and voided_at is null and canceled_at is null and effective_at <= now()
        and source <> all($4::text[])
        and ($1::bigint is null or (effective_at, id) > (${AFTER_INSTANT}, $2::uuid))
      order by effective_at, id limit $3`,
    values: [after?.micros ?? null, after?.id ?? null, limit, [...PAYMENT_SOURCES]],
  });
  return result.rows.map(dueGrant);
}
