import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  NO_FUNDING,
  fundingByGrant,
  post,
  type Grant,
  type JobFunding,
  type PostingResult,
  type WalletFunds,
} from '../../src/funds/posting/index.js';
import { T0, grantFixture } from '../support/grant-fixture.js';

/**
 * A job's funding rows (CONTRACT.md "Credit grants": funding): every movement of the job
 * on each grant is in its grant's row — held = captured + returned once resolved, and the
 * job's cost on the grant = captured + adjusted — and the rows with the debt add up to
 * what the job was charged, whatever its corrections.
 */
function grant(id: string, priority: number): Grant {
  return grantFixture(id, { category: priority < 50 ? 'promotional' : 'paid', priority });
}

function ok(result: PostingResult): Extract<PostingResult, { ok: true }> {
  if (!result.ok) throw new Error(`refused: ${result.refusal.reason}`);
  return result;
}

describe('fundingByGrant', () => {
  it('accounts for the capture and every correction per grant; Σ (captured + adjusted) + debt = what the job was charged', () => {
    fc.assert(
      fc.property(
        fc.array(fc.bigInt({ min: 1n, max: 2_000n }), { minLength: 1, maxLength: 4 }),
        fc.bigInt({ min: 1n, max: 3_000n }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.array(fc.bigInt({ min: -1_500n, max: 1_500n }), { maxLength: 6 }),
        (amounts, hold, fraction, corrections) => {
          let wallet: WalletFunds = { grants: amounts.map((_, i) => grant(`g${i}`, 10 * (i + 1))), debt: 0n };
          amounts.forEach((amount, i) => {
            wallet = ok(post(wallet, NO_FUNDING, { kind: 'activate', grantId: `g${i}`, amount, entry: 'grant', now: T0 })).wallet;
          });
          const held = post(wallet, NO_FUNDING, { kind: 'hold', amount: hold, now: T0 });
          fc.pre(held.ok);
          if (!held.ok) return;
          let job: JobFunding = held.job;
          wallet = held.wallet;
          const heldTotal = job.shares.reduce((s, x) => s + x.held, 0n);
          const captured = ok(
            post(wallet, job, { kind: 'capture', amount: (heldTotal * BigInt(Math.round(fraction * 1000))) / 1000n, now: T0 }),
          );
          ({ wallet, job } = captured);
          corrections.forEach((amount, i) => {
            const result = post(wallet, job, { kind: 'adjustment', version: i + 2, amount, now: T0 });
            if (result.ok) ({ wallet, job } = result);
          });
          const { rows, debt } = fundingByGrant(job.shares, job.draws);
          const charged =
            job.shares.reduce((s, x) => s + x.captured - x.refunded, 0n) + job.draws.reduce((s, d) => s + d.amount - d.refunded, 0n);
          expect(rows.reduce((s, r) => s + r.captured + r.adjusted, 0n) + debt).toBe(charged);
          for (const row of rows) expect(row.held).toBe(row.captured + row.returned);
          expect(new Set(rows.map((r) => r.grantId)).size).toBe(rows.length);
          for (const draw of job.draws) if (draw.grantId) expect(rows.some((r) => r.grantId === draw.grantId)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('shows the issue’s case: a capture and three corrections (+0.0036, −0.0105, +0.0582) on one grant add up to the job’s cost', () => {
    const shares = [{ grantId: 'g', held: 60_000n, captured: 8_700n, returned: 51_300n, refunded: 6_900n }];
    const draws = [
      { version: 1, grantId: 'g', amount: 3_600n, refunded: 3_600n },
      { version: 3, grantId: 'g', amount: 58_200n, refunded: 0n },
    ];
    const { rows, debt } = fundingByGrant(shares, draws);
    expect(rows).toEqual([{ grantId: 'g', held: 60_000n, captured: 8_700n, returned: 51_300n, refunded: 6_900n, adjusted: 51_300n }]);
    expect(rows[0]!.captured + rows[0]!.adjusted + debt).toBe(60_000n);
  });
});
