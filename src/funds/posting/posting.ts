import { postActivation, postExpiry, postPayerRefund, postRefundReversal, postVoid } from './grant-postings.js';
import { postAdjustment, postCapture, postExtension, postHold } from './job-postings.js';
import type { Intent, JobFunding, Micros, Party, Posting, PostingResult, WalletFunds } from './types.js';

/**
 * The posting module: the one place that adds up money (docs/ARCHITECTURE.md "funds/",
 * TigerBeetle's state machine). Given a wallet's grants and debt, a job's
 * shares and draws, and an intent, it returns every entry to write, the grants', shares'
 * and debt's new values, and the wallet's totals — or a named refusal. Pure: the writer
 * locks, asks, and writes what it says; reconciliation replays entries with `replay`.
 */
export function post(wallet: WalletFunds, job: JobFunding, intent: Intent): PostingResult {
  switch (intent.kind) {
    case 'hold':
      return postHold(wallet, job, intent.amount, intent.now);
    case 'capture':
      return postCapture(wallet, job, intent.amount, intent.now);
    case 'release':
      return postCapture(wallet, job, 0n, intent.now, 'release');
    case 'extension':
      return postExtension(wallet, job, intent.version, intent.amount, intent.mayOwe, intent.now);
    case 'adjustment':
      return postAdjustment(wallet, job, intent.version, intent.amount, intent.now);
    case 'activate':
      return postActivation(wallet, job, intent.grantId, intent.amount, intent.entry, intent.now);
    case 'expire':
      return postExpiry(wallet, job, intent.grantId, intent.now);
    case 'void':
      return postVoid(wallet, job, intent.grantId, intent.now);
    case 'refund':
      return postPayerRefund(wallet, job, intent.grantId, intent.amount, intent.entry, intent.now);
    case 'refund_reversal':
      return postRefundReversal(wallet, job, intent.grantId, intent.amount, intent.now);
  }
}

export interface Replayed {
  /** per grant: what its entries say it holds and has held */
  readonly grants: ReadonlyMap<string, { remaining: Micros; held: Micros }>;
  readonly debt: Micros;
}

/**
 * What a run of postings makes of a wallet that started empty: each grant's remaining and
 * held, and the debt. Reconciliation compares it with the stored grants (`grant_drift`);
 * the properties compare it with what `post` returned.
 */
export function replay(postings: Iterable<Posting>): Replayed {
  const grants = new Map<string, { remaining: Micros; held: Micros }>();
  let debt = 0n;
  const of = (id: string) => grants.get(id) ?? grants.set(id, { remaining: 0n, held: 0n }).get(id)!;
  const shift = (party: Party, amount: Micros) => {
    if (party === 'debt') debt -= amount;
    else if (typeof party === 'object') of(party.grant).remaining += amount;
  };
  for (const p of postings) {
    if (p.flags === 'posted') {
      shift(p.from, -p.amount);
      shift(p.to, p.amount);
      continue;
    }
    // Held against the debt (a terminal event's extension): only its capture moves money.
    if (p.from === 'debt') {
      if (p.flags === 'post_pending') debt += p.amount;
      continue;
    }
    const grant = of((p.from as { grant: string }).grant);
    if (p.flags === 'pending') grant.held += p.amount;
    else grant.held -= p.amount;
    if (p.flags === 'post_pending') grant.remaining -= p.amount;
  }
  return { grants, debt };
}
