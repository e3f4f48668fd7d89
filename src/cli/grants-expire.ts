import { openDatabase } from '../db/connect.js';
import type { Pool } from '../db/pool.js';
import { debugStacks, processConfig } from '../config/index.js';
import { migrate } from '../db/migrate.js';
import { countExpiryDue, expireDueGrants, type DueGrant } from '../duties/grant-duties.js';
import { lapsingByCurrency, listExpiringGrants } from '../funds/index.js';
import { formatAmount, type Micros } from '../money/index.js';
import { sweepProgress } from './sweep-progress.js';

/**
 * `tally grants expire [--dry-run [--hours N]] [--json]`: the expiry sweep the workers run
 * every 2 s (duties/grant-duties.ts), by hand. With --dry-run it lists what would expire
 * in the next N hours and writes nothing; without, it expires what is due now, each grant
 * through the same keyed writer (expireGrant), so running it beside the workers — or
 * twice — posts each expiry once. Like `tally reconcile`, it works on the database itself
 * (DATABASE_URL, or the embedded server): an operator's maintenance over every tenant, not
 * a call of the HTTP API.
 *
 * Exit 0 when done; 1 when some grant could not be expired (named on stderr; the workers'
 * sweep tries again); 2 when the run could not be made at all (database unreachable).
 */

export interface GrantsExpireOptions {
  dryRun?: boolean;
  hours: number;
  json?: boolean;
}

/** Exit status when nothing could be done (the database unreachable, …). */
const FAILED_EXIT_CODE = 2;

export async function grantsExpireCommand(options: GrantsExpireOptions): Promise<void> {
  try {
    const db = await openDatabase(processConfig(), { max: 4 });
    try {
      await migrate(db.pool);
      if (options.dryRun) await dryRun(db.pool, options);
      else await expireNow(db.pool, options);
    } finally {
      await db.close();
    }
  } catch (error) {
    console.error(`tally grants expire: the run failed: ${error instanceof Error ? error.message : String(error)}`);
    if (debugStacks() && error instanceof Error) console.error(error.stack);
    process.exitCode = FAILED_EXIT_CODE;
  }
}

async function dryRun(pool: Pool, options: GrantsExpireOptions): Promise<void> {
  const { until, grants } = await listExpiringGrants(pool, options.hours);
  const totals = lapsingByCurrency(grants);
  if (options.json) {
    console.log(
      JSON.stringify(
        {
          dry_run: true,
          hours: options.hours,
          until: until.toISOString(),
          grants: grants.map((g) => ({
            grant_id: g.id,
            wallet_id: g.walletId,
            tenant_id: g.tenantId,
            currency: g.currency,
            expires_at: g.expiresAt.toISOString(),
            remaining: formatAmount(g.remaining),
            held: formatAmount(g.held),
            lapsing: formatAmount(g.lapsing),
          })),
          totals: totalsJson(totals),
        },
        null,
        2,
      ),
    );
    return;
  }
  console.log(
    `grants expiring before ${until.toISOString()} (the next ${options.hours} h, and any due but not yet posted): ${grants.length}`,
  );
  for (const g of grants) {
    console.log(
      `  ${g.id}  wallet ${g.walletId}  tenant ${g.tenantId}  expires ${g.expiresAt.toISOString()}  lapses ${formatAmount(g.lapsing)} ${g.currency}` +
        (g.held > 0n ? ` (${formatAmount(g.held)} held for jobs stays with them)` : ''),
    );
  }
  console.log(`would lapse: ${totalsText(totals)}`);
  console.log('Nothing was written (--dry-run). Without it, what is due now expires; the workers do this every 2 s.');
}

interface Expired {
  grant: DueGrant;
  lapsed: Micros;
}

async function expireNow(pool: Pool, options: GrantsExpireOptions): Promise<void> {
  const expired: Expired[] = [];
  const progress = sweepProgress('tally grants expire', await countExpiryDue(pool));
  const failures: { grant_id: string; error: string }[] = [];
  let result;
  try {
    result = await expireDueGrants(pool, {
      onExpired: (grant, lapsed) => {
        expired.push({ grant, lapsed });
        progress.tick();
      },
      onFailed: (grant, error) => failures.push({ grant_id: grant.id, error: error instanceof Error ? error.message : String(error) }),
    });
  } finally {
    progress.stop();
  }
  const totals = lapsingByCurrency(expired.map((e) => ({ currency: e.grant.currency, lapsing: e.lapsed })));
  if (options.json) {
    console.log(
      JSON.stringify(
        {
          dry_run: false,
          expired: expired.map((e) => ({
            grant_id: e.grant.id,
            wallet_id: e.grant.walletId,
            tenant_id: e.grant.tenantId,
            currency: e.grant.currency,
            expires_at: e.grant.dueAt.toISOString(),
            lapsed: formatAmount(e.lapsed),
          })),
          totals: totalsJson(totals),
          already_expired: result.skipped,
          failed: failures,
        },
        null,
        2,
      ),
    );
  } else {
    for (const e of expired) {
      console.log(
        `expired ${e.grant.id}  wallet ${e.grant.walletId}  tenant ${e.grant.tenantId}  expired at ${e.grant.dueAt.toISOString()}  lapsed ${formatAmount(e.lapsed)} ${e.grant.currency}`,
      );
    }
    console.log(`${expired.length} grant(s) expired now; lapsed: ${totalsText(totals)}`);
    if (result.skipped > 0) console.log(`${result.skipped} grant(s) were expired meanwhile by a worker's sweep (posted once, by it).`);
  }
  for (const f of failures) console.error(`tally grants expire: grant ${f.grant_id} could not be expired: ${f.error}`);
  if (failures.length > 0) process.exitCode = 1;
}

function totalsJson(totals: Map<string, Micros>): Record<string, string> {
  return Object.fromEntries([...totals].map(([currency, amount]) => [currency, formatAmount(amount)]));
}

function totalsText(totals: Map<string, Micros>): string {
  return totals.size === 0 ? 'nothing' : [...totals].map(([currency, amount]) => `${formatAmount(amount)} ${currency}`).join(', ');
}
