import { availableAt, canFund, drawDownOrder, fundableGrants, unheld } from './order.js';
import type { Draw, JobFunding, Micros, PostingResult, Share, WalletFunds } from './types.js';
import { Working, min } from './working.js';

/**
 * A reservation: refused unless `available` covers it (the one funds check), then split
 * across the fundable grants in draw-down order, one share per grant, each held on it.
 */
export function postHold(wallet: WalletFunds, job: JobFunding, amount: Micros, now: bigint): PostingResult {
  if (job.resolved || job.shares.length > 0) return { ok: false, refusal: { reason: 'hold_already_resolved' } };
  const available = availableAt(wallet, now);
  if (amount > available) return { ok: false, refusal: { reason: 'insufficient_funds', available, requested: amount } };
  const work = new Working(wallet, now);
  const shares: Share[] = [];
  let left = amount;
  for (const grant of fundableGrants(wallet, now)) {
    if (left === 0n) break;
    const take = min(unheld(grant), left);
    work.move('reserve', 'pending', { grant: grant.id }, 'revenue', take);
    shares.push({ grantId: grant.id, held: take, captured: 0n, returned: 0n, refunded: 0n });
    left -= take;
  }
  return work.done({ ...job, shares });
}

/**
 * A capture: consumes the shares in allocation order up to `amount` and returns the rest
 * of each, in one posting (`capture` + `release_remainder` per share). A release is a
 * capture of nothing, under its own entry type.
 */
export function postCapture(
  wallet: WalletFunds,
  job: JobFunding,
  amount: Micros,
  now: bigint,
  type: 'capture' | 'release' = 'capture',
): PostingResult {
  if (job.resolved) return { ok: false, refusal: { reason: 'hold_already_resolved' } };
  const held = job.shares.reduce((sum, s) => sum + s.held, 0n);
  if (amount > held || amount < 0n) return { ok: false, refusal: { reason: 'hold_exceeded', held, requested: amount } };
  const work = new Working(wallet, now);
  let left = amount;
  const shares = job.shares.map((share) => {
    const captured = min(share.held, left);
    const returned = share.held - captured;
    left -= captured;
    work.move('capture', 'post_pending', { grant: share.grantId }, 'revenue', captured);
    work.move(type === 'capture' ? 'release_remainder' : 'release', 'void_pending', { grant: share.grantId }, 'revenue', returned);
    work.settleArrival(share.grantId, returned);
    return { ...share, captured, returned };
  });
  return work.done({ ...job, shares, resolved: true });
}

/**
 * An adjustment. A charge draws in draw-down order from what grants have unheld; what no
 * grant covers becomes debt (work already delivered always bills). A refund undoes the
 * job's consumptions latest first — its draws from the newest, then its capture's shares
 * from the last allocated — each up to what it took.
 */
export function postAdjustment(wallet: WalletFunds, job: JobFunding, version: number, amount: Micros, now: bigint): PostingResult {
  const work = new Working(wallet, now);
  if (amount >= 0n) {
    const draws: Draw[] = [];
    let left = amount;
    for (const grant of fundableGrants(wallet, now)) {
      if (left === 0n) break;
      const take = min(unheld(grant), left);
      work.move('adjustment', 'posted', { grant: grant.id }, 'revenue', take);
      draws.push({ version, grantId: grant.id, amount: take, refunded: 0n });
      left -= take;
    }
    if (left > 0n) {
      work.move('adjustment', 'posted', 'debt', 'revenue', left);
      draws.push({ version, grantId: null, amount: left, refunded: 0n });
    }
    return work.done({ ...job, draws: [...job.draws, ...draws] });
  }
  const requested = -amount;
  const refundable =
    job.shares.reduce((s, x) => s + x.captured - x.refunded, 0n) + job.draws.reduce((s, d) => s + d.amount - d.refunded, 0n);
  if (requested > refundable) return { ok: false, refusal: { reason: 'refund_exceeds_consumption', refundable, requested } };
  let left = requested;
  const draws = [...job.draws];
  for (let i = draws.length - 1; i >= 0 && left > 0n; i--) {
    const draw = draws[i]!;
    const back = min(draw.amount - draw.refunded, left);
    if (draw.grantId === null) refundDebtDraw(work, back);
    else refundTo(work, draw.grantId, back);
    draws[i] = { ...draw, refunded: draw.refunded + back };
    left -= back;
  }
  const shares = [...job.shares];
  for (let i = shares.length - 1; i >= 0 && left > 0n; i--) {
    const share = shares[i]!;
    const back = min(share.captured - share.refunded, left);
    refundTo(work, share.grantId, back);
    shares[i] = { ...share, refunded: share.refunded + back };
    left -= back;
  }
  return work.done({ ...job, shares, draws });
}

function refundTo(work: Working, grantId: string, amount: Micros): void {
  work.move('adjustment', 'posted', 'revenue', { grant: grantId }, amount);
  work.settleArrival(grantId, amount);
}

/**
 * Undoing a draw that became debt pays the debt down. If money that entered since has
 * already paid that debt, the grant it came from is not recorded; the rest then goes to
 * the first grant that can fund (else the newest grant, where settleArrival decides), so
 * the tenant gets it back either way and the debt never goes below zero.
 */
function refundDebtDraw(work: Working, amount: Micros): void {
  const toDebt = min(amount, work.debt);
  work.move('adjustment', 'posted', 'revenue', 'debt', toDebt);
  if (amount === toDebt) return;
  const grants = work.wallet.grants;
  const live = grants.filter((g) => canFund(g, work.now)).sort(drawDownOrder)[0];
  const target = live ?? [...grants].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0))[0];
  if (!target) throw new Error('a refund of debt that was repaid, in a wallet without grants: nothing could have repaid it');
  refundTo(work, target.id, amount - toDebt);
}
