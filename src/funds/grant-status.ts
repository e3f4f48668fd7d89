import type { GrantSource } from './grants.js';
import type { Instant, Micros } from './posting/index.js';

/**
 * A grant's `status` (CONTRACT.md "Credit grants"), decided from its stored facts and the
 * database's clock: one ordered table of rules, the first that holds wins. Each rule is
 * written twice, side by side — as a predicate (grantStatus, for the views) and as SQL
 * (grantStatusSql, for the list's `status` filter) — so the two cannot drift apart
 * without the diff showing it; test/e2e/grants.test.ts lists every status and checks the
 * filter against the views.
 *
 * - `voided`: an operator voided it; whatever else holds, it funds nothing.
 * - `canceled`: a payment grant whose payment ended without money (it never activated;
 *   one paid after all is activated and reads on as below).
 * - `awaiting_payment`: a payment grant not yet paid.
 * - `disputed`: an open dispute freezes it.
 * - `expired`: at or after `expires_at`, whether or not its expiry has posted (it funds
 *   nothing from that instant: funds/posting isExpiredAt).
 * - `scheduled`: not activated yet (before `effective_at`, or in the few seconds until its
 *   activation posts); `remaining` and `held` are 0.
 * - `depleted`: activated, nothing remaining.
 * - `active`: everything else.
 */

export const GRANT_STATUSES = ['scheduled', 'active', 'depleted', 'expired', 'voided', 'awaiting_payment', 'disputed', 'canceled'] as const;
export type GrantStatus = (typeof GRANT_STATUSES)[number];

/** Sources whose money arrives with a payment: until it does, such a grant is awaiting it. */
export const PAYMENT_SOURCES: readonly GrantSource[] = ['stripe_checkout', 'stripe_payment', 'auto_recharge'];

/** What the status depends on, as stored; instants in microseconds. */
export interface GrantStatusFacts {
  source: GrantSource;
  activated: boolean;
  voided: boolean;
  canceled: boolean;
  disputed: boolean;
  expiryPosted: boolean;
  expiresAt: Instant | null;
  remaining: Micros;
}

interface Rule {
  status: GrantStatus;
  holds: (g: GrantStatusFacts, now: Instant) => boolean;
  /** the same test over the grants row `g` at the instant `now` (SQL expressions) */
  sql: (g: string, now: string) => string;
}

const RULES: readonly Rule[] = [
  { status: 'voided', holds: (g) => g.voided, sql: (g) => `${g}.voided_at is not null` },
  {
    status: 'canceled',
    holds: (g) => !g.activated && g.canceled,
    sql: (g) => `${g}.activated_at is null and ${g}.canceled_at is not null`,
  },
  {
    status: 'awaiting_payment',
    holds: (g) => !g.activated && PAYMENT_SOURCES.includes(g.source),
    sql: (g) => `${g}.activated_at is null and ${g}.source in (${PAYMENT_SOURCES.map((s) => `'${s}'`).join(', ')})`,
  },
  { status: 'disputed', holds: (g) => g.disputed, sql: (g) => `${g}.disputed` },
  {
    status: 'expired',
    holds: (g, now) => g.expiryPosted || (g.expiresAt !== null && now >= g.expiresAt),
    sql: (g, now) => `(${g}.expiry_posted_at is not null or ${g}.expires_at <= ${now})`,
  },
  { status: 'scheduled', holds: (g) => !g.activated, sql: (g) => `${g}.activated_at is null` },
  { status: 'depleted', holds: (g) => g.remaining === 0n, sql: (g) => `${g}.remaining = 0` },
  { status: 'active', holds: () => true, sql: () => 'true' },
];

/** The grant's status at `now` (the database's clock, in microseconds). */
export function grantStatus(grant: GrantStatusFacts, now: Instant): GrantStatus {
  return RULES.find((rule) => rule.holds(grant, now))!.status;
}

/**
 * The status as an SQL expression over the grants row aliased `g`, at the instant `now`
 * (an SQL expression of type timestamptz): `case when … then 'voided' … end`.
 */
export function grantStatusSql(g: string, now: string): string {
  return `(case ${RULES.map((rule) => `when ${rule.sql(g, now)} then '${rule.status}'`).join(' ')} end)`;
}
