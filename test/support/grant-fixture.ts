import { NO_FUNDING, post, type Grant, type Posting, type PostingResult, type WalletFunds } from '../../src/funds/posting/index.js';

/** An instant for the posting module's pure tests, in microseconds. */
export const T0 = 1_800_000_000_000_000n;

/** A grant as the posting module sees it: paid, priority 50, effective and created at T0, nothing in it yet. */
export function grantFixture(id: string, fields: Partial<Grant> = {}): Grant {
  return {
    id,
    category: 'paid',
    priority: 50,
    effectiveAt: T0,
    expiresAt: null,
    createdAt: T0,
    remaining: 0n,
    held: 0n,
    voided: false,
    disputed: false,
    expiryPosted: false,
    expiredAmount: 0n,
    voidedAmount: 0n,
    ...fields,
  };
}

/** The posting module's accepted result, or a test failure naming its refusal. */
export function ok(result: PostingResult): Extract<PostingResult, { ok: true }> {
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.refusal, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`);
  return result;
}

/** A wallet whose grants have been activated with these amounts, through the module itself. */
export function funded(grants: Grant[], amounts: bigint[]): { wallet: WalletFunds; postings: Posting[] } {
  let wallet: WalletFunds = { grants, debt: 0n };
  const postings: Posting[] = [];
  grants.forEach((g, i) => {
    const r = ok(post(wallet, NO_FUNDING, { kind: 'activate', grantId: g.id, amount: amounts[i]!, entry: 'grant', now: T0 }));
    wallet = r.wallet;
    postings.push(...r.postings);
  });
  return { wallet, postings };
}
