import type { Queryable } from '../db/pool.js';
import { decide, yieldsToAwaitingEvents, type Alert, type Decision, type JobState, type LifecycleEvent, type Outcome } from '../lifecycle/index.js';
import { jobsWithAwaitingEvents, markManySettled, markedUnder, type EventClaim } from '../queue/index.js';
import { raiseEachAlert, type AlertClass, type RaisedAlert } from '../alerts/index.js';
import { decisionAlertDetail } from './alert-details.js';
import { SettlementKeyTaken } from './errors.js';
import { findHolds, resolveHolds } from './hold.js';
import { writeJobs, type LockedJob } from './locked-job.js';
import { holdDecidedExtensions } from './extend.js';
import { planIntent, type PlannedIntent, type SettlingIntent } from './plan-intent.js';
import { findSettlement, findSettlements, insertSettlements, type SettlementRow } from './settlements.js';
import { applyPostings } from '../funds/index.js';
import { postingsOfDecisions } from './allocate.js';
import { formatAmount } from '../money/index.js';
import { enqueueMessages, type NewMessage } from '../outbound/enqueue.js';

/**
 * The write half of a settlement, shared by settle() (a batch of one) and settleBatch():
 * decide on the locked jobs, write what the decisions say, move the accounts. Set-based:
 * each table is written once for the whole batch, so a batch costs the same number of
 * statements whatever its size (plus one per wallet it moves). Runs inside their
 * transaction; no I/O but this database.
 */

export interface SettleRequest {
  jobId: string;
  event: LifecycleEvent;
  claim?: EventClaim;
}

export interface SettleResult {
  outcome: Outcome['status'];
  reason?: string;
  alerts: AlertClass[];
  jobState: JobState;
  /** This event's financial effect: written now, or written before by an equal event. */
  settlement: SettlementRow | null;
  /** true when the effect existed already and this call wrote none. */
  replayed: boolean;
}

/** One decision, written, with the account projections still to move. */
export interface Written {
  request: SettleRequest;
  job: LockedJob;
  decision: Decision;
  /** this event's effect: written now, or by an equal event before */
  settlement: SettlementRow | null;
  replayed: boolean;
  /** every settlement this decision inserted now (none when its effect existed before) */
  inserted: SettlementRow[];
  /** what each inserted settlement writes */
  plans: PlannedIntent[];
  charges: boolean;
}

/**
 * Decides each request on its locked job and writes everything but the account
 * projections: the settlements, holds, jobs and the events' outcomes (fenced by their
 * claims), one statement per table. The only fact decide() needs from outside the job
 * row — is an accepted event still awaiting settlement? — is read here, under the jobs'
 * locks, for the events that yield to one. A settlement key that exists already throws
 * SettlementKeyTaken (the caller answers it: settle() with the existing effect, a batch
 * by settling its events one by one). At most one request per job.
 */
export async function writeDecisions(
  tx: Queryable,
  jobs: ReadonlyMap<string, LockedJob>,
  requests: readonly SettleRequest[],
): Promise<Written[]> {
  const locked = requests.map((r) => jobs.get(r.jobId)!);
  const asking = requests.filter((r) => yieldsToAwaitingEvents(r.event)).map((r) => r.jobId);
  const awaiting = await jobsWithAwaitingEvents(tx, asking);
  // An event's extension is held first (extend.ts), so that its capture bills from the grown hold.
  const decisions = await holdDecidedExtensions(
    tx,
    locked,
    requests.map((r, i) => decide({ ...locked[i]!.view, eventAwaiting: awaiting.has(r.jobId) }, r.event, locked[i]!.policy)),
  );
  const settling = decisions.map((d) => d.intents.filter((i): i is SettlingIntent => i.kind !== 'extension'));

  const holding = requests.filter((_, i) => settling[i]!.length > 0).map((r) => r.jobId);
  const tenants = new Set(locked.map((job) => job.row.tenant_id));
  const holds = holding.length > 0 ? await findHolds(tx, holding, tenants.size === 1 ? [...tenants][0] : undefined) : new Map();
  const plans: PlannedIntent[][] = decisions.map((decision, i) => {
    const claim = requests[i]!.claim;
    const source = claim ? { provider: claim.provider, eventKey: claim.eventKey } : null;
    return settling[i]!.map((intent) => planIntent(locked[i]!, intent, holds.get(locked[i]!.row.id), source));
  });
  const planned = plans.flat();
  const inserted = await insertSettlements(
    tx,
    planned.map((p) => p.settlement),
  );
  const taken = planned.find((p) => !inserted.has(p.settlement.key));
  if (taken) throw new SettlementKeyTaken(taken.settlement.key);
  await resolveHolds(
    tx,
    planned.flatMap((p) => (p.resolvesHold ? [p.resolvesHold] : [])),
  );
  await writeJobs(
    tx,
    locked.map((job, i) => ({ job, decision: decisions[i]! })),
  );

  // An event whose effect an equal event wrote before returns that effect.
  const replayKeys = decisions.flatMap((d) => (d.intents.length === 0 && d.effectKey !== null ? [d.effectKey] : []));
  const earlier = await findSettlements(tx, replayKeys);
  const written = requests.map((request, i): Written => {
    const decision = decisions[i]!;
    const own = plans[i]!.map((p) => inserted.get(p.settlement.key)!);
    const settlement = own.at(-1) ?? (decision.effectKey !== null ? (earlier.get(decision.effectKey) ?? null) : null);
    return {
      request,
      job: locked[i]!,
      decision,
      settlement,
      replayed: own.length === 0 && settlement !== null,
      inserted: own,
      plans: plans[i]!,
      charges: plans[i]!.some((p) => p.charges),
    };
  });
  await markManySettled(
    tx,
    written.flatMap(({ request, decision, settlement }) =>
      request.claim
        ? [
            {
              claim: request.claim,
              mark: {
                status: decision.outcome.status,
                reason: decision.outcome.reason ?? null,
                settlementKey: settlement?.settlement_key ?? null,
              },
            },
          ]
        : [],
    ),
  );
  return written;
}

/**
 * Posts the entries of everything written with the account projections, and raises the
 * alerts and writes the tenants' messages (src/outbound/: sent exactly for what commits).
 * The wallet and revenue rows are the hot rows every settlement of a wallet (and of a
 * tenant) queues on, so they are updated last: what does not depend on their balances
 * (job.settled, hold.expired, the decisions' own alerts) is written before them, and
 * their locks are held for their own statements and COMMIT — plus, only when a charge
 * overdrew a wallet, its alert and message. The posting module splits each settlement
 * across the job's shares and the wallet's grants (allocate.ts), and the one writer writes
 * them (funds/apply-postings.ts): each wallet one statement that moves it and inserts its
 * entries with their running balances, in its order; then the revenue accounts, in one.
 */
export async function moveAccounts(tx: Queryable, written: Written[]): Promise<SettleResult[]> {
  const sourceOf = ({ request, replayed, settlement }: Written) => {
    const source = request.claim ? `${request.claim.provider}/${request.claim.eventKey}` : `${request.jobId}:${request.event.type}`;
    return (!replayed && settlement?.settlement_key) || source;
  };
  const alertOf = (w: Written, alert: { class: AlertClass; detail?: Record<string, unknown> }): RaisedAlert => ({
    ...alert,
    tenantId: w.job.row.tenant_id,
    jobId: w.job.row.id,
    source: sourceOf(w),
  });
  await enqueueMessages(tx, written.flatMap(settledMessages));
  await raiseEachAlert(
    tx,
    written.flatMap((w) => w.decision.outcome.raises.map((a) => alertOf(w, { class: a, detail: decisionDetail(w, a) }))),
  );

  // The one writer (funds/apply-postings.ts), for every wallet the batch moves, in id order.
  const wallets = [...new Set(written.filter((w) => w.plans.some((p) => p.moves)).map((w) => w.job.row.wallet_id))].sort();
  const ofWallet = (wallet: string) => written.filter((w) => w.job.row.wallet_id === wallet);
  const postings = await postingsOfDecisions(tx, new Map(wallets.map((wallet) => [wallet, ofWallet(wallet)])));
  const applied = await applyPostings(tx, postings, { overdraft: 'report' });
  // Each decision's wallet balance after its own settlements, as if the batch had been
  // settled one event at a time in its order (the writer's balanceAfter): so
  // wallet_overdrawn names the event whose charge overdrew the wallet, not every charge of
  // the batch (issue 11.8) — exactly as settle() raises it for the same events one by one.
  const balanceAfter = new Map<Written, bigint | null>();
  for (const [i, wallet] of wallets.entries()) {
    let next = 0;
    for (const w of ofWallet(wallet)) {
      next += w.plans.length;
      if (w.plans.length > 0) balanceAfter.set(w, applied[i]![next - 1]!.balanceAfter);
    }
  }

  const overdrafts: RaisedAlert[] = [];
  const overdraftMessages: NewMessage[] = [];
  const results = written.map((w): SettleResult => {
    const { job, decision, request } = w;
    const alerts: AlertClass[] = [...decision.outcome.raises];
    const walletBalance = balanceAfter.get(w);
    if (w.charges && walletBalance !== undefined && walletBalance !== null && walletBalance < 0n) {
      const event = request.claim ? { provider: request.claim.provider, event_key: request.claim.eventKey } : {};
      alerts.push('wallet_overdrawn');
      overdrafts.push(
        alertOf(w, { class: 'wallet_overdrawn', detail: { wallet_id: job.row.wallet_id, balance: walletBalance.toString(), ...event } }),
      );
      overdraftMessages.push({
        tenantId: job.row.tenant_id,
        type: 'wallet.overdrawn',
        data: { wallet_id: job.row.wallet_id, currency: job.row.currency, balance: formatAmount(walletBalance) },
      });
    }
    return {
      outcome: decision.outcome.status,
      ...(decision.outcome.reason ? { reason: decision.outcome.reason } : {}),
      alerts,
      jobState: decision.nextState,
      settlement: w.settlement,
      replayed: w.replayed,
    };
  });
  await raiseEachAlert(tx, overdrafts);
  await enqueueMessages(tx, overdraftMessages);
  return results;
}

/** What the alert must say (alert-details.ts): the usage, its price and what was and was not billed. */
function decisionDetail({ job, decision, request }: Written, alert: Alert): Record<string, unknown> {
  const source = request.claim ? { provider: request.claim.provider, eventKey: request.claim.eventKey } : null;
  return decisionAlertDetail(alert, { job, decision, event: request.event, source });
}

/** job.settled for each settlement the decision wrote now; hold.expired for an expiry's release. */
function settledMessages({ job, decision, inserted, request }: Written): NewMessage[] {
  const row = job.row;
  return inserted.flatMap((s): NewMessage[] => [
    {
      tenantId: row.tenant_id,
      type: 'job.settled',
      data: {
        charge_type: s.charge_type,
        amount: formatAmount(s.amount),
        currency: row.currency,
        settlement_key: s.settlement_key,
        job: { id: row.id, state: decision.nextState, wallet_id: row.wallet_id, model: row.model, provider: row.provider },
      },
    },
    ...(request.event.type === 'hold.expired' && s.charge_type === 'release'
      ? [
          {
            tenantId: row.tenant_id,
            type: 'hold.expired' as const,
            data: { job_id: row.id, wallet_id: row.wallet_id, amount: formatAmount(s.amount), currency: row.currency },
          },
        ]
      : []),
  ]);
}

/**
 * After the in-doubt transaction of a lost COMMIT has ended (the caller waited on its
 * job rows): whether it committed, told by a write only it could have made — the
 * settlement row with the id it inserted, or else its claim's event marked under the
 * claim's fencing token.
 */
export async function committedWrite(tx: Queryable, settlement: SettlementRow | null, claim: EventClaim | undefined): Promise<boolean> {
  if (settlement) return (await findSettlement(tx, settlement.settlement_key))?.id === settlement.id;
  return claim ? markedUnder(tx, claim) : false;
}
