import type { Draw, Micros, Share } from './types.js';

/**
 * A job's money per grant, for its view (CONTRACT.md "Credit grants": `funding`): every
 * movement of the job on each grant, so each row accounts for itself —
 *   held = captured + returned (once the hold is resolved: the hold's share), and
 *   the job's cost on the grant = captured + adjusted,
 * where `adjusted` is signed: what the job's positive adjustments drew from the grant, less
 * what its refunds gave back (of those draws and of the captured part, `refunded`). Rows
 * come in allocation order (the hold's shares), then the grants only adjustments reached,
 * in the order they were drawn; `debt` is the adjustments' part no grant covered (net of
 * refunds), so Σ (captured + adjusted) + debt is the job's captured + adjusted.
 */
export interface GrantFunding {
  grantId: string;
  held: Micros;
  captured: Micros;
  returned: Micros;
  refunded: Micros;
  adjusted: Micros;
}

export function fundingByGrant(shares: readonly Share[], draws: readonly Draw[]): { rows: GrantFunding[]; debt: Micros } {
  const rows: GrantFunding[] = shares.map((s) => ({
    grantId: s.grantId,
    held: s.held,
    captured: s.captured,
    returned: s.returned,
    refunded: s.refunded,
    adjusted: -s.refunded,
  }));
  let debt = 0n;
  for (const draw of draws) {
    const net = draw.amount - draw.refunded;
    if (draw.grantId === null) {
      debt += net;
      continue;
    }
    let row = rows.find((r) => r.grantId === draw.grantId);
    if (!row) {
      row = { grantId: draw.grantId, held: 0n, captured: 0n, returned: 0n, refunded: 0n, adjusted: 0n };
      rows.push(row);
    }
    row.adjusted += net;
  }
  return { rows, debt };
}
