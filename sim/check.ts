import type { Api } from './client.js';
import { formatMicros, parseMicros, type Ids } from './driver.js';
import type { Model } from './model.js';
import { ADMIN_TOKEN } from './world.js';

/**
 * A quiescent point: every wallet, grant and job as Tally's API shows it, against the
 * model; then a reconciliation run, clean but for the classes the run provokes on purpose.
 * Returns what disagrees, one line each (empty: all agree).
 */

/** Exceptions the simulation provokes: conflicting bodies, usage past a hold, charges past the grants, events on ended jobs. */
const PROVOKED = new Set([
  'event_key_conflict',
  'usage_exceeds_reservation',
  'wallet_overdrawn',
  'late_success_after_release',
  'late_usage_after_release',
]);

export async function compare(api: Api, ids: Ids, model: Model): Promise<string[]> {
  const found: string[] = [];
  const same = (what: string, tally: unknown, expected: unknown) => {
    const a = JSON.stringify(tally, (_k, v) => (typeof v === 'bigint' ? formatMicros(v) : v));
    const b = JSON.stringify(expected, (_k, v) => (typeof v === 'bigint' ? formatMicros(v) : v));
    if (a !== b) found.push(`${what}: Tally ${a}, model ${b}`);
  };
  for (const [name, expected] of model.wallets()) {
    const wallet = ids.wallets.get(name)!;
    const view = (await api.call('GET', `/v1/wallets/${wallet.id}`, ADMIN_TOKEN)).body;
    same(`wallet ${name} balance`, parseMicros(view.balance), expected.balance);
    same(`wallet ${name} reserved`, parseMicros(view.reserved), expected.reserved);
    same(`wallet ${name} available`, parseMicros(view.available), expected.available);
    same(`wallet ${name} debt`, parseMicros(view.debt), expected.debt);
    const grants = await allGrants(api, wallet.id);
    // a recharge's grant is Tally's own: the wallet's n-th auto_recharge grant, in creation order
    const recharges = [...grants.values()]
      .filter((g) => g.source === 'auto_recharge')
      .sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at));
    const expectedRecharges = [...expected.grants.keys()].filter((g) => g.includes(':recharge:')).length;
    same(`wallet ${name} recharges`, recharges.length, expectedRecharges);
    for (const [grant, g] of expected.grants) {
      const recharge = /:recharge:(\d+)$/.exec(grant);
      const tally = recharge ? recharges[Number(recharge[1]) - 1] : grants.get(ids.grants.get(grant)?.id ?? '');
      if (!tally) {
        found.push(`grant ${grant} of wallet ${name}: not in Tally`);
        continue;
      }
      same(
        `grant ${grant} (wallet ${name})`,
        { amount: parseMicros(tally.amount), remaining: parseMicros(tally.remaining), held: parseMicros(tally.held), status: tally.status },
        g,
      );
    }
    const limits = (await api.call('GET', `/v1/tenants/${ids.tenants.get(wallet.tenant)!.id}/spend-limits`, ADMIN_TOKEN)).body;
    const day = (limits?.data ?? []).find((l: { period: string }) => l.period === 'day');
    if (day) same(`tenant of wallet ${name}: spent today`, parseMicros(day.spent), expected.spentToday);
  }
  for (const [name, expected] of model.jobs()) {
    const id = ids.jobs.get(name);
    if (!id) continue;
    const job = (await api.call('GET', `/v1/jobs/${id}`, ADMIN_TOKEN)).body;
    same(
      `job ${name}`,
      {
        state: job.state,
        reserved: parseMicros(job.reserved),
        captured: parseMicros(job.captured),
        released: parseMicros(job.released),
        adjusted: parseMicros(job.adjusted),
        limits: sorted(job.limits),
        extensions: job.extensions.map((x: { version: number; amount: string; source: string }) => ({
          version: x.version,
          amount: parseMicros(x.amount),
          source: x.source,
        })),
        holdExhausted: job.hold_exhausted
          ? {
              reason: job.hold_exhausted.reason,
              reserved: parseMicros(job.hold_exhausted.reserved),
              usagePrice: parseMicros(job.hold_exhausted.usage_price),
            }
          : null,
        usageSoFar: job.usage_so_far === null ? null : sorted(job.usage_so_far),
      },
      {
        ...expected,
        limits: sorted(expected.limits),
        extensions: expected.extensions.map((x) => ({ version: x.version, amount: x.amount, source: x.source })),
        holdExhausted: expected.holdExhausted && {
          reason: expected.holdExhausted.reason,
          reserved: expected.holdExhausted.reserved,
          usagePrice: expected.holdExhausted.usagePrice,
        },
        usageSoFar: expected.usageSoFar === null ? null : sorted(expected.usageSoFar),
      },
    );
  }
  const run = await api.call('POST', '/v1/reconciliation/runs', ADMIN_TOKEN, {});
  for (const exception of (run.body?.exceptions ?? []) as { class: string; objects: unknown; detail: unknown }[]) {
    if (!PROVOKED.has(exception.class))
      found.push(`reconciliation: ${exception.class} ${JSON.stringify(exception.objects)} ${JSON.stringify(exception.detail)}`);
  }
  return found;
}

function sorted(usage: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(usage).sort(([a], [b]) => (a < b ? -1 : 1)));
}

interface GrantView {
  id: string;
  amount: string;
  remaining: string;
  held: string;
  status: string;
  source: string;
  created_at: string;
}

async function allGrants(api: Api, walletId: string): Promise<Map<string, GrantView>> {
  const grants = new Map<string, GrantView>();
  let after: string | null = null;
  for (;;) {
    const page: { data: GrantView[]; has_more: boolean } = (
      await api.call('GET', `/v1/wallets/${walletId}/grants?limit=100${after ? `&starting_after=${after}` : ''}`, ADMIN_TOKEN)
    ).body;
    for (const g of page.data) grants.set(g.id, g);
    if (!page.has_more) return grants;
    after = page.data.at(-1)!.id;
  }
}
