import type { Queryable } from '../db/pool.js';
import { SCALE } from '../money/index.js';
import { unsettledSql } from '../queue/index.js';

/** Every exception class reconciliation reports (CONTRACT.md). */
export type ExceptionClass =
  | 'terminal_job_without_settlement'
  | 'settlement_without_entries'
  | 'hold_captured_and_released'
  | 'hold_open_past_expiry'
  | 'event_stuck'
  | 'event_dead'
  | 'projection_drift'
  | 'currency_sum_nonzero'
  | 'usage_mismatch'
  | 'event_key_conflict'
  | 'event_mismatch'
  | 'late_success_after_release'
  | 'late_usage_after_release'
  | 'usage_exceeds_reservation'
  | 'wallet_overdrawn'
  | 'running_balance_drift'
  | 'spend_period_drift';

export interface Finding {
  class: ExceptionClass;
  /** the same inconsistency found again has the same fingerprint: it is the same exception */
  fingerprint: string;
  objects: Record<string, unknown>;
  detail: Record<string, unknown>;
}

/** An event pending or claimed for longer than this is stuck. */
export const EVENT_STUCK_SECONDS = 300;

/**
 * The four projection columns recomputed from the immutable entries, per account (with
 * the flag semantics of transfers: posted → posted; pending → pending; post_pending →
 * pending −a, posted +a; void_pending → pending −a). With `accountParam` (e.g. '$1'),
 * only that account's entries are read, over the debit/credit indexes.
 */
export function projectionFromEntries(accountParam?: string): string {
  const debit = accountParam ? `where debit_account_id = ${accountParam}` : '';
  const credit = accountParam ? `where credit_account_id = ${accountParam}` : '';
  return `
  select account_id,
         sum(debits_pending) as debits_pending, sum(debits_posted) as debits_posted,
         sum(credits_pending) as credits_pending, sum(credits_posted) as credits_posted
  from (
    select debit_account_id as account_id,
           case flags when 'pending' then amount when 'posted' then 0 else -amount end as debits_pending,
           case when flags in ('posted', 'post_pending') then amount else 0 end as debits_posted,
           0::bigint as credits_pending, 0::bigint as credits_posted
    from ledger_entries ${debit}
    union all
    select credit_account_id,
           0, 0,
           case flags when 'pending' then amount when 'posted' then 0 else -amount end,
           case when flags in ('posted', 'post_pending') then amount else 0 end
    from ledger_entries ${credit}
  ) movements
  group by account_id`;
}

/**
 * SQL for a bigint amount of micros as the wire's decimal string in major units, the
 * same form as formatAmount ("12.500000", "-0.006000"): a run's answer is part of the
 * HTTP API, where amounts are never raw micros.
 */
function amount(expression: string): string {
  return `round((${expression})::numeric / ${10 ** SCALE}, ${SCALE})::text`;
}

/** Whole seconds from a timestamp to now (null for a null timestamp): an age in a run's detail. */
function secondsSince(expression: string): string {
  return `floor(extract(epoch from now() - ${expression}))::bigint`;
}

/**
 * Usage with zero-valued dimensions dropped: a dimension reported as 0 and one not
 * reported are billed alike, so they must compare alike. jsonb is canonical (key
 * order is not significant), so equal usage compares and prints equal.
 */
function nonzeroUsage(expression: string): string {
  return `(select jsonb_object_agg(u.key, u.value) from jsonb_each(${expression}) u where u.value <> '0'::jsonb)`;
}

interface Check {
  class: ExceptionClass;
  /** set-based SQL returning (key text, objects jsonb, detail jsonb) */
  sql: string;
}

/**
 * What each entry says a wallet held after it (migrations/0009) recomputed from the
 * entries: along the wallet's order, numbers 1, 2, 3 … without a gap, instants never
 * going down, balance and reserved equal to the sums of the entries so far; the head on
 * the wallet's row equal to its last entry; and no entry of the wallet outside its
 * order. Balances at an instant and statements are read from these values, so they are
 * checked like the projection is. One exception per wallet, naming the first entry that
 * disagrees.
 */
const RUNNING_BALANCE_CHECK: Check = {
  class: 'running_balance_drift',
  sql: `with chain as (
          select e.wallet_id, e.wallet_seq, e.created_at, e.balance_after, e.reserved_after,
                 row_number() over w as position,
                 sum(case when e.debit_account_id = e.credit_account_id then 0 -- a grant paying the wallet's debt
                          when e.flags in ('posted', 'post_pending')
                          then case when e.credit_account_id = e.wallet_id then e.amount else -e.amount end
                          else 0 end) over w as balance_sum,
                 sum(case when e.debit_account_id <> e.wallet_id then 0
                          when e.flags = 'pending' then e.amount
                          when e.flags in ('post_pending', 'void_pending') then -e.amount
                          else 0 end) over w as reserved_sum,
                 lag(e.created_at) over w as previous_at
          from ledger_entries e where e.wallet_id is not null
          window w as (partition by e.wallet_id order by e.wallet_seq rows between unbounded preceding and current row)
        ), per_wallet as (
          select wallet_id,
                 min(wallet_seq) filter (where broken) as first_broken,
                 count(*) filter (where broken) as broken
          from (select *, (wallet_seq <> position or balance_after <> balance_sum or reserved_after <> reserved_sum
                           or created_at < previous_at) as broken from chain) c
          group by wallet_id
        ), unchained as (
          select w.id as wallet_id, count(*) as n
          from ledger_entries e join accounts w on w.kind = 'wallet' and w.id in (e.debit_account_id, e.credit_account_id)
          where e.wallet_id is null group by w.id
        )
        select a.id::text as key, jsonb_build_object('wallet_id', a.id, 'tenant_id', a.tenant_id) as objects,
               jsonb_build_object(
                 'first_broken_sequence', p.first_broken, 'broken_entries', coalesce(p.broken, 0), 'unchained_entries', coalesce(u.n, 0),
                 'head', jsonb_build_object('sequence', a.entry_seq, 'balance', ${amount('a.running_balance')},
                                            'reserved', ${amount('a.running_reserved')}, 'at', a.last_entry_at),
                 'last_entry', case when l.wallet_id is null then null else jsonb_build_object('sequence', l.wallet_seq,
                                 'balance', ${amount('l.balance_after')}, 'reserved', ${amount('l.reserved_after')}, 'at', l.created_at) end) as detail
        from accounts a
        left join per_wallet p on p.wallet_id = a.id
        -- the wallet's last entry: one probe of (wallet_id, wallet_seq) per wallet, not a sort of the ledger
        left join lateral (select e.wallet_id, e.wallet_seq, e.balance_after, e.reserved_after, e.created_at from ledger_entries e
                           where e.wallet_id = a.id order by e.wallet_seq desc limit 1) l on true
        left join unchained u on u.wallet_id = a.id
        where a.kind = 'wallet'
          and (coalesce(p.broken, 0) > 0 or coalesce(u.n, 0) > 0
               or (a.entry_seq, a.running_balance, a.running_reserved) is distinct from
                  (coalesce(l.wallet_seq, 0), coalesce(l.balance_after, 0), coalesce(l.reserved_after, 0))
               or a.last_entry_at is distinct from l.created_at)`,
};
/**
 * The spend counters of spend limits (migrations/0014) recomputed from the holds and
 * settlements with their entries: per tenant, currency and UTC period (day, month), the
 * captures and adjustments posted in it (by their settlement's created_at) plus the holds
 * created in it less what resolved them — its open holds. The counter is written by the
 * statement that posts those entries, in the transaction that creates the hold or the
 * settlement (the same now()), so any difference — either way, or a period one side
 * lacks — is drift. Entries of neither a hold nor a settlement (forged), and settlements
 * without entries, are other classes' findings and count on neither side. One exception
 * per period, found again as the same one while it lasts.
 */
const SPEND_PERIOD_CHECK: Check = {
  class: 'spend_period_drift',
  sql: `with movements as (
          -- a reservation: its hold's reserve entry, in the hold's period
          select e.tenant_id, e.currency, h.created_at as at, e.amount
          from holds h join ledger_entries e on e.id = h.pending_entry_id
          union all
          -- A settlement's entries, read once (settlement keys and holds' job ids are unique,
          -- so each entry meets at most one of each): what resolved a hold (capture,
          -- remainder, release) leaves the hold's period; captures and adjustments count in
          -- the settlement's period (a refund is the wallet's credit).
          select e.tenant_id, e.currency, m.at, m.amount
          from settlements s join ledger_entries e on e.settlement_key = s.settlement_key
          left join holds h on h.job_id = s.job_id
          cross join lateral (values
            (case when e.entry_type in ('capture', 'release_remainder', 'release') then h.created_at end, -e.amount),
            (case when e.entry_type in ('capture', 'adjustment') then s.created_at end,
             case when e.credit_account_id = e.wallet_id then -e.amount else e.amount end)
          ) as m(at, amount)
          where e.entry_type in ('capture', 'release_remainder', 'release', 'adjustment') and m.at is not null
        ), recomputed as (
          select m.tenant_id, m.currency, p.period, p.starts_on, sum(m.amount) as spent
          from movements m
          cross join lateral (values ('day', (m.at at time zone 'UTC')::date),
                                     ('month', date_trunc('month', m.at at time zone 'UTC')::date)) as p(period, starts_on)
          group by m.tenant_id, m.currency, p.period, p.starts_on
        )
        select c.tenant_id || ':' || c.currency || ':' || c.period || ':' || to_char(c.starts_on, 'YYYY-MM-DD') as key,
               jsonb_build_object('tenant_id', c.tenant_id, 'currency', c.currency, 'period', c.period,
                                  'starts_on', to_char(c.starts_on, 'YYYY-MM-DD')) as objects,
               jsonb_build_object('counted', ${amount('coalesce(k.spent, 0)')}, 'recomputed', ${amount('coalesce(r.spent, 0)')}) as detail
        from (select tenant_id, currency, period, starts_on from spend_periods
              union select tenant_id, currency, period, starts_on from recomputed) c
        left join spend_periods k using (tenant_id, currency, period, starts_on)
        left join recomputed r using (tenant_id, currency, period, starts_on)
        where coalesce(k.spent, 0) <> coalesce(r.spent, 0)`,
};

/**
 * One set-based query per class, over indexes where the table is large. Read-only:
 * the repairs live in repair.ts and go through the normal keyed paths.
 */
const CHECKS: Check[] = [
  {
    class: 'terminal_job_without_settlement',
    sql: `select j.id::text as key, jsonb_build_object('job_id', j.id, 'tenant_id', j.tenant_id) as objects,
                 jsonb_build_object('state', j.state) as detail
          from jobs j
          where j.state in ('captured', 'released')
            and not exists (select 1 from settlements s where s.job_id = j.id and s.charge_type in ('capture', 'release'))`,
  },
  {
    class: 'settlement_without_entries',
    // Set-based: every entry a settlement needs, anti-joined with the entries at once (a
    // hash join over the table), not one index probe per settlement and type — at a
    // million entries that was 333,000 probes and most of the run.
    sql: `with expected as (
            select s.settlement_key, s.job_id, s.charge_type, s.amount, x.entry_type, x.position
            from settlements s
            cross join lateral (values
              ('capture', 1, s.charge_type = 'capture' and s.amount > 0),
              ('release_remainder', 2, s.charge_type = 'capture' and s.remainder > 0),
              ('release', 3, s.charge_type = 'release' and s.amount > 0),
              ('adjustment', 4, s.charge_type = 'adjustment' and s.amount <> 0)
            ) as x(entry_type, position, wanted)
            where x.wanted
          )
          select m.settlement_key as key, jsonb_build_object('settlement_key', m.settlement_key, 'job_id', m.job_id) as objects,
                 jsonb_build_object('charge_type', m.charge_type, 'amount', ${amount('m.amount')},
                                    'missing', array_agg(m.entry_type order by m.position)) as detail
          from expected m
          where not exists (select 1 from ledger_entries e where e.settlement_key = m.settlement_key and e.entry_type = m.entry_type)
          group by m.settlement_key, m.job_id, m.charge_type, m.amount`,
  },
  {
    class: 'hold_captured_and_released',
    sql: `select s.job_id::text as key, jsonb_build_object('job_id', s.job_id) as objects,
                 jsonb_build_object('settlements', jsonb_agg(s.settlement_key order by s.settlement_key)) as detail
          from settlements s where s.charge_type in ('capture', 'release')
          group by s.job_id having count(distinct s.charge_type) > 1`,
  },
  {
    class: 'hold_open_past_expiry',
    sql: `select h.job_id::text as key, jsonb_build_object('job_id', h.job_id, 'wallet_id', h.wallet_id) as objects,
                 jsonb_build_object('amount', ${amount('h.amount')}, 'expires_at', h.expires_at) as detail
          from holds h where h.resolved_by is null and h.expires_at < now()`,
  },
  {
    class: 'event_stuck',
    sql: `select e.provider || '/' || e.event_key as key,
                 jsonb_build_object('provider', e.provider, 'event_key', e.event_key, 'job_id', e.job_id) as objects,
                 jsonb_build_object('state', e.state, 'attempts', e.attempts, 'received_at', e.received_at, 'last_error', e.last_error) as detail
          from webhook_events e
          where ${unsettledSql('e')} and e.received_at < now() - make_interval(secs => ${EVENT_STUCK_SECONDS})`,
  },
  {
    // A dead event keeps its job's hold open (cancel grace and expiry wait for it), so
    // each one reports the funds held behind it and for how long: `held` is the job's
    // open hold (null once resolved), until an operator retries or discards the event.
    class: 'event_dead',
    sql: `select e.provider || '/' || e.event_key as key,
                 jsonb_build_object('provider', e.provider, 'event_key', e.event_key, 'job_id', e.job_id) as objects,
                 jsonb_build_object('attempts', e.attempts, 'last_error', e.last_error,
                   'dead_lettered_at', e.dead_lettered_at, 'dead_for_seconds', ${secondsSince('e.dead_lettered_at')},
                   'held', case when h.job_id is null then null else jsonb_build_object(
                     'amount', ${amount('h.amount')}, 'currency', h.currency, 'wallet_id', h.wallet_id,
                     'held_since', h.created_at, 'held_for_seconds', ${secondsSince('h.created_at')}, 'expires_at', h.expires_at) end) as detail
          from webhook_events e
          left join holds h on h.job_id = e.job_id and h.resolved_by is null
          where e.state = 'dead'`,
  },
  {
    class: 'projection_drift',
    sql: `with sums as (${projectionFromEntries()})
          select a.id::text as key, jsonb_build_object('account_id', a.id, 'tenant_id', a.tenant_id, 'kind', a.kind) as objects,
                 jsonb_build_object(
                   'projection', jsonb_build_array(${amount('a.debits_pending')}, ${amount('a.debits_posted')}, ${amount('a.credits_pending')}, ${amount('a.credits_posted')}),
                   'entries', jsonb_build_array(${amount('coalesce(s.debits_pending, 0)')}, ${amount('coalesce(s.debits_posted, 0)')},
                                                ${amount('coalesce(s.credits_pending, 0)')}, ${amount('coalesce(s.credits_posted, 0)')})) as detail
          from accounts a left join sums s on s.account_id = a.id
          where (a.debits_pending, a.debits_posted, a.credits_pending, a.credits_posted)
                is distinct from (coalesce(s.debits_pending, 0), coalesce(s.debits_posted, 0), coalesce(s.credits_pending, 0), coalesce(s.credits_posted, 0))`,
  },
  {
    class: 'currency_sum_nonzero',
    sql: `select a.currency as key, jsonb_build_object('currency', a.currency) as objects,
                 jsonb_build_object('posted_sum', ${amount('sum(a.credits_posted - a.debits_posted)')},
                                    'pending_sum', ${amount('sum(a.credits_pending - a.debits_pending)')}) as detail
          from accounts a group by a.currency
          having sum(a.credits_posted - a.debits_posted) <> 0 or sum(a.credits_pending - a.debits_pending) <> 0`,
  },
  {
    // The newest import per (provider, job ref) against the newest usage we applied
    // (the capture's, or the highest adjustment's); zero dimensions count as absent.
    // Usage the provider reports for a job we billed nothing for — released, not
    // settled yet, or no job with that ref at all — is a mismatch too: the provider
    // says work was done. The fingerprint includes both usages, so the same
    // disagreement found again is the same exception, and different numbers (a newer
    // import, a correction) are a new one.
    class: 'usage_mismatch',
    sql: `with latest_import as (
            select distinct on (provider, provider_job_ref) provider, provider_job_ref, usage, import_id
            from provider_usage order by provider, provider_job_ref, imported_at desc, import_id desc
          ), accepted as (
            select distinct on (s.job_id) s.job_id, s.snapshot->'usage' as usage
            from settlements s where s.snapshot is not null
            order by s.job_id, s.version desc, s.created_at desc
          ), compared as (
            select i.provider, i.provider_job_ref, i.import_id, i.usage as reported, j.id as job_id, a.usage as accepted,
                   coalesce(${nonzeroUsage('i.usage')}, '{}') as reported_nonzero,
                   coalesce(${nonzeroUsage('a.usage')}, '{}') as accepted_nonzero
            from latest_import i
            left join jobs j on j.provider = i.provider and j.provider_job_ref = i.provider_job_ref
            left join accepted a on a.job_id = j.id
          )
          select coalesce(c.job_id::text, c.provider || '/' || c.provider_job_ref) || ':'
                   || md5(c.accepted_nonzero::text || ' ' || c.reported_nonzero::text) as key,
                 jsonb_build_object('job_id', c.job_id, 'provider', c.provider, 'provider_job_ref', c.provider_job_ref) as objects,
                 jsonb_build_object('accepted', c.accepted, 'provider_reported', c.reported, 'import_id', c.import_id) as detail
          from compared c
          where c.accepted_nonzero <> c.reported_nonzero`,
  },
  {
    class: 'event_key_conflict',
    sql: `select d.provider || '/' || d.event_key as key,
                 jsonb_build_object('provider', d.provider, 'event_key', d.event_key, 'job_id', min(d.job_id::text)) as objects,
                 jsonb_build_object('deliveries', count(*), 'last_received_at', max(d.received_at)) as detail
          from delivery_attempts d where d.outcome = 'event_key_conflict'
          group by d.provider, d.event_key`,
  },
  {
    class: 'event_mismatch',
    sql: `select d.provider || '/' || d.event_key as key,
                 jsonb_build_object('provider', d.provider, 'event_key', d.event_key, 'job_id', min(d.job_id::text)) as objects,
                 jsonb_build_object('deliveries', count(*), 'mismatch', min(d.detail->>'mismatch')) as detail
          from delivery_attempts d where d.outcome = 'event_mismatch'
          group by d.provider, d.event_key`,
  },
  ...(['late_success_after_release', 'late_usage_after_release', 'usage_exceeds_reservation'] as const).map(
    (alert): Check => ({
      class: alert,
      sql: `select a.source as key, jsonb_build_object('job_id', a.job_id, 'tenant_id', a.tenant_id, 'source', a.source) as objects,
                   coalesce(a.detail, '{}') as detail
            from alerts a where a.class = '${alert}'`,
    }),
  ),
  {
    class: 'wallet_overdrawn',
    sql: `select a.id::text as key, jsonb_build_object('wallet_id', a.id, 'tenant_id', a.tenant_id) as objects,
                 jsonb_build_object('balance', ${amount('a.credits_posted - a.debits_posted')}, 'currency', a.currency) as detail
          from accounts a where a.kind = 'wallet' and a.credits_posted - a.debits_posted < 0`,
  },
  RUNNING_BALANCE_CHECK,
  SPEND_PERIOD_CHECK,
];

export const EXCEPTION_CLASSES: readonly ExceptionClass[] = [...new Set(CHECKS.map((c) => c.class))];

/** The table whose rows a check reads through (what its progress says it covers). */
const COVERS: Record<ExceptionClass, string> = {
  terminal_job_without_settlement: 'jobs',
  settlement_without_entries: 'settlements',
  hold_captured_and_released: 'settlements',
  hold_open_past_expiry: 'holds',
  event_stuck: 'webhook_events',
  event_dead: 'webhook_events',
  projection_drift: 'ledger_entries',
  currency_sum_nonzero: 'accounts',
  usage_mismatch: 'provider_usage',
  event_key_conflict: 'delivery_attempts',
  event_mismatch: 'delivery_attempts',
  late_success_after_release: 'alerts',
  late_usage_after_release: 'alerts',
  usage_exceeds_reservation: 'alerts',
  wallet_overdrawn: 'accounts',
  running_balance_drift: 'ledger_entries',
  spend_period_drift: 'ledger_entries',
};

/** One check starting or done, for a progress display (the CLI's, on stderr). */
export interface CheckProgress {
  class: ExceptionClass;
  /** 1-based place of the check in this pass, of `total` */
  index: number;
  total: number;
  phase: 'start' | 'done';
  /** the table the check reads through, and its row count as the planner estimates it */
  covers: { table: string; rows: number };
  /** done only: the check's own time and what it found */
  seconds?: number;
  found?: number;
}

/**
 * Every inconsistency of the given classes (all of them by default), one query per class.
 * `concurrency` > 1 runs that many checks at once, each on its own connection — only for
 * a pool (a single client would queue them); the findings come back in check order.
 */
export async function findInconsistencies(
  db: Queryable,
  classes: readonly ExceptionClass[] = EXCEPTION_CLASSES,
  onCheck?: (progress: CheckProgress) => void,
  concurrency = 1,
): Promise<Finding[]> {
  const checks = CHECKS.filter((c) => classes.includes(c.class));
  // Only for a display: the planner's estimate costs nothing, a count(*) would cost a scan.
  const estimates = new Map<string, number>();
  if (onCheck) {
    const tables = [...new Set(checks.map((c) => COVERS[c.class]))];
    const result = await db.query<{ relname: string; rows: string }>(
      `select relname, greatest(reltuples, 0)::bigint::text as rows from pg_class where relkind = 'r' and relnamespace = current_schema()::regnamespace and relname = any($1)`,
      [tables],
    );
    for (const row of result.rows) estimates.set(row.relname, Number(row.rows));
  }
  const found: Finding[][] = checks.map(() => []);
  let next = 0;
  const lane = async () => {
    while (next < checks.length) {
      const i = next++;
      const check = checks[i]!;
      const covers = { table: COVERS[check.class], rows: estimates.get(COVERS[check.class]) ?? 0 };
      const progress = { class: check.class, index: i + 1, total: checks.length, covers };
      onCheck?.({ ...progress, phase: 'start' });
      const started = performance.now();
      const result = await db.query<{ key: string; objects: Record<string, unknown>; detail: Record<string, unknown> }>(check.sql);
      found[i] = result.rows.map((row) => ({ class: check.class, fingerprint: `${check.class}:${row.key}`, objects: row.objects, detail: row.detail }));
      onCheck?.({ ...progress, phase: 'done', seconds: (performance.now() - started) / 1000, found: result.rows.length });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, checks.length)) }, lane));
  return found.flat();
}
