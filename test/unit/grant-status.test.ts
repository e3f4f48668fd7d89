import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GRANT_STATUSES, grantStatus, grantStatusSql, type GrantStatusFacts } from '../../src/funds/grant-status.js';

const NOW = 1_800_000_000_000_000n; // µs

function facts(fields: Partial<GrantStatusFacts> = {}): GrantStatusFacts {
  return {
    source: 'grant',
    activated: true,
    voided: false,
    canceled: false,
    disputed: false,
    expiryPosted: false,
    expiresAt: null,
    remaining: 5_000_000n,
    ...fields,
  };
}

describe('grantStatus', () => {
  it('names each status by its rule', () => {
    expect(grantStatus(facts(), NOW)).toBe('active');
    expect(grantStatus(facts({ remaining: 0n }), NOW)).toBe('depleted');
    expect(grantStatus(facts({ activated: false, remaining: 0n }), NOW)).toBe('scheduled');
    expect(grantStatus(facts({ expiresAt: NOW + 1n }), NOW)).toBe('active');
    expect(grantStatus(facts({ expiresAt: NOW }), NOW)).toBe('expired');
    expect(grantStatus(facts({ expiresAt: NOW - 1n }), NOW)).toBe('expired');
    expect(grantStatus(facts({ expiryPosted: true, expiresAt: NOW - 1n, remaining: 0n }), NOW)).toBe('expired');
    expect(grantStatus(facts({ voided: true }), NOW)).toBe('voided');
    expect(grantStatus(facts({ disputed: true }), NOW)).toBe('disputed');
    expect(grantStatus(facts({ source: 'stripe_checkout', activated: false, remaining: 0n }), NOW)).toBe('awaiting_payment');
    expect(grantStatus(facts({ source: 'auto_recharge', activated: false, canceled: true, remaining: 0n }), NOW)).toBe('canceled');
  });

  it('reads a paid-after-cancel grant as the money it brought, and a depleted grant past its expiry as expired', () => {
    expect(grantStatus(facts({ source: 'stripe_checkout', canceled: true }), NOW)).toBe('active');
    expect(grantStatus(facts({ remaining: 0n, expiresAt: NOW - 10n }), NOW)).toBe('expired');
  });

  it('lets a void win over everything, and a scheduled grant lapse at its expiry', () => {
    expect(grantStatus(facts({ voided: true, disputed: true, expiresAt: NOW - 1n, remaining: 0n }), NOW)).toBe('voided');
    expect(grantStatus(facts({ activated: false, expiresAt: NOW - 1n, remaining: 0n }), NOW)).toBe('expired');
  });

  it('is total, and each status holds only when its facts do', () => {
    const arbitraryFacts = fc.record({
      source: fc.constantFrom('credit', 'grant', 'stripe_checkout', 'stripe_payment', 'auto_recharge' as const),
      activated: fc.boolean(),
      voided: fc.boolean(),
      canceled: fc.boolean(),
      disputed: fc.boolean(),
      expiryPosted: fc.boolean(),
      expiresAt: fc.option(fc.bigInt({ min: NOW - 5n, max: NOW + 5n }), { nil: null }),
      remaining: fc.bigInt({ min: 0n, max: 3n }),
    });
    fc.assert(
      fc.property(arbitraryFacts, (g) => {
        const status = grantStatus(g, NOW);
        expect(GRANT_STATUSES).toContain(status);
        const lapsed = g.expiryPosted || (g.expiresAt !== null && NOW >= g.expiresAt);
        expect(status === 'voided').toBe(g.voided);
        if (status === 'active') expect(g.activated && !g.disputed && !lapsed && g.remaining > 0n).toBe(true);
        if (status === 'depleted') expect(g.remaining).toBe(0n);
        if (status === 'expired') expect(lapsed).toBe(true);
        if (status === 'scheduled' || status === 'awaiting_payment' || status === 'canceled') expect(g.activated).toBe(false);
      }),
    );
  });
});

describe('grantStatusSql', () => {
  it('is one case expression with a branch per rule, in the same order, the last catching all', () => {
    const sql = grantStatusSql('g', 'clock.now');
    const branches = [...sql.matchAll(/then '([a-z_]+)'/g)].map((m) => m[1]);
    expect(branches).toEqual(['voided', 'canceled', 'awaiting_payment', 'disputed', 'expired', 'scheduled', 'depleted', 'active']);
    expect(new Set(branches)).toEqual(new Set(GRANT_STATUSES));
    expect(sql).toContain("g.source in ('stripe_checkout', 'stripe_payment', 'auto_recharge')");
    expect(sql).toContain('g.expires_at <= clock.now');
    expect(sql).toMatch(/when true then 'active' end\)$/);
  });
});
