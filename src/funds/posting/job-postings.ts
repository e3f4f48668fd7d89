import { planted } from '../../plants.js';
import { availableAt, canFund, drawDownOrder, fundableGrants, unheld } from './order.js';
import type { Draw, ExtensionPiece, JobFunding, Micros, PostingResult, Share, WalletFunds } from './types.js';
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
  for (const part of drawDown(wallet, now, amount).parts) {
    work.move('reserve', 'pending', { grant: part.grantId }, 'revenue', part.amount);
    shares.push({ grantId: part.grantId, held: part.amount, captured: 0n, returned: 0n, refunded: 0n });
  }
  return work.done({ ...job, shares });
}

/**
 * What `amount` takes from the wallet's fundable grants in draw-down order, each up to its
 * unheld money, and what no grant covers (`left`): the one walk of the order, shared by a
 * hold, an extension and a charge.
 */
function drawDown(wallet: WalletFunds, now: bigint, amount: Micros): { parts: { grantId: string; amount: Micros }[]; left: Micros } {
  const parts: { grantId: string; amount: Micros }[] = [];
  let left = amount;
  for (const grant of fundableGrants(wallet, now)) {
    if (left === 0n) break;
    const take = min(unheld(grant), left);
    if (take > 0n) parts.push({ grantId: grant.id, amount: take });
    left -= take;
  }
  return { parts, left };
}

/**
 * An extension of an open hold (CONTRACT.md "Long-running jobs"): held like a reservation,
 * in draw-down order, each grant's part added to the job's share of it (a new share for a
 * grant the job had none of) and kept as the extension's piece, so that a capture consumes
 * in allocation order. Refused unless `available` covers it — except for a terminal
 * event's extension (`mayOwe`: the work is delivered), where what the grants cannot hold
 * is held against the wallet's debt, a piece of no grant, consumed last.
 */
export function postExtension(
  wallet: WalletFunds,
  job: JobFunding,
  version: number,
  amount: Micros,
  mayOwe: boolean,
  now: bigint,
): PostingResult {
  if (job.resolved) return { ok: false, refusal: { reason: 'hold_already_resolved' } };
  if (amount <= 0n) throw new RangeError(`an extension of ${amount} micros: an extension holds something`);
  const available = availableAt(wallet, now);
  if (!mayOwe && amount > available) return { ok: false, refusal: { reason: 'insufficient_funds', available, requested: amount } };
  const work = new Working(wallet, now);
  const shares = [...job.shares];
  const pieces: ExtensionPiece[] = [];
  const { parts, left } = drawDown(wallet, now, amount);
  for (const part of parts) {
    work.move('reserve', 'pending', { grant: part.grantId }, 'revenue', part.amount);
    const i = shares.findIndex((s) => s.grantId === part.grantId);
    if (i >= 0) shares[i] = { ...shares[i]!, held: shares[i]!.held + part.amount };
    else shares.push({ grantId: part.grantId, held: part.amount, captured: 0n, returned: 0n, refunded: 0n });
    pieces.push({ version, grantId: part.grantId, amount: part.amount });
  }
  if (left > 0n) {
    work.move('reserve', 'pending', 'debt', 'revenue', left);
    pieces.push({ version, grantId: null, amount: left });
  }
  return work.done({ ...job, shares, pieces: [...job.pieces, ...pieces] });
}

/**
 * A capture: consumes the job's money in allocation order — the first hold's shares, then
 * each extension's pieces by version — up to `amount`, and returns the rest of each share,
 * in one posting (`capture` + `release_remainder` per share). A release is a capture of
 * nothing, under its own entry type. What an extension held against the debt comes last:
 * its captured part becomes debt (a draw of version 0, which a refund undoes like any).
 */
export function postCapture(
  wallet: WalletFunds,
  job: JobFunding,
  amount: Micros,
  now: bigint,
  type: 'capture' | 'release' = 'capture',
): PostingResult {
  if (job.resolved) return { ok: false, refusal: { reason: 'hold_already_resolved' } };
  const owed = job.pieces.reduce((sum, p) => (p.grantId === null ? sum + p.amount : sum), 0n);
  const held = job.shares.reduce((sum, s) => sum + s.held, 0n) + owed;
  if (amount > held || amount < 0n) return { ok: false, refusal: { reason: 'hold_exceeded', held, requested: amount } };
  const work = new Working(wallet, now);
  let left = amount;
  const capturedOf = new Map<string | null, Micros>();
  for (const piece of allocationOrder(job)) {
    const take = min(piece.amount, left);
    capturedOf.set(piece.grantId, (capturedOf.get(piece.grantId) ?? 0n) + take);
    left -= take;
  }
  const shares = job.shares.map((share, i) => {
    const captured = capturedOf.get(share.grantId) ?? 0n;
    // the simulation's planted bug: a release that forgets its last share
    if (type === 'release' && i === job.shares.length - 1 && planted('release_forgets_share')) return share;
    const returned = share.held - captured;
    work.move('capture', 'post_pending', { grant: share.grantId }, 'revenue', captured);
    work.move(type === 'capture' ? 'release_remainder' : 'release', 'void_pending', { grant: share.grantId }, 'revenue', returned);
    work.settleArrival(share.grantId, returned);
    return { ...share, captured, returned };
  });
  const draws = [...job.draws];
  if (owed > 0n) {
    const owing = capturedOf.get(null) ?? 0n;
    work.move('capture', 'post_pending', 'debt', 'revenue', owing);
    work.move(type === 'capture' ? 'release_remainder' : 'release', 'void_pending', 'debt', 'revenue', owed - owing);
    if (owing > 0n) draws.push({ version: 0, grantId: null, amount: owing, refunded: 0n });
  }
  return work.done({ ...job, shares, draws, resolved: true });
}

/** The job's held money in the order a capture consumes it: the first hold's part of each share, then each extension's pieces. */
function allocationOrder(job: JobFunding): { grantId: string | null; amount: Micros }[] {
  const extended = new Map<string, Micros>();
  for (const p of job.pieces) if (p.grantId !== null) extended.set(p.grantId, (extended.get(p.grantId) ?? 0n) + p.amount);
  const first = job.shares.map((s) => ({ grantId: s.grantId as string | null, amount: s.held - (extended.get(s.grantId) ?? 0n) }));
  return [...first, ...job.pieces.map((p) => ({ grantId: p.grantId, amount: p.amount }))];
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
    const { parts, left } = drawDown(wallet, now, amount);
    for (const part of parts) {
      work.move('adjustment', 'posted', { grant: part.grantId }, 'revenue', part.amount);
      draws.push({ version, grantId: part.grantId, amount: part.amount, refunded: 0n });
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
