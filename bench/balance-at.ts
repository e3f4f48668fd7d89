import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type pg from 'pg';
import { benchPool, recreateDatabase } from './database.js';
import { exitReason, freePort, runTally, waitFor } from './processes.js';
import { bars, note } from './progress.js';
import { Random } from './random.js';

/**
 * `GET /v1/wallets/{id}?at=` at a wallet with a million entries (issue 13: under 50 ms).
 * The wallet is opened over the API, then seeded in the database, set-based
 * (generate_series, one INSERT per chunk), with entries exactly as Tally writes them —
 * each with its place in the wallet's order, the balance and reserved amount after it,
 * its instant — and the wallet's head and projections moved to match. Then, over HTTP
 * like any client, the balance at random instants of that year, each checked against
 * the closed form of the seeded history; and for scale, one deep page of entries and a
 * statement of one day.
 */

export interface BalanceAtConfig {
  adminUrl: string;
  workDir: string;
  logLevel: string;
  entries: number;
  samples: number;
  seed: number;
}

export interface BalanceAtResult {
  entries: number;
  seedSeconds: number;
  seedEntriesPerSecond: number;
  tableBytes: number;
  samples: number;
  /** client-side, over HTTP with a tenant's key: auth, wallet lookup, the instant's lookup */
  latencyMs: { p50: number; p99: number; max: number; first: number };
  /** PostgreSQL's own time for the instant's lookup (EXPLAIN ANALYZE of one), and its plan's first line */
  queryMs: number;
  plan: string;
  deepPageMs: number;
  statementOfADay: { lines: number; ms: number };
  correct: boolean;
}

/** Seeded as units of four entries: a top-up, a reservation, its capture and the remainder's release. */
const UNIT = { credit: 1000n, reserve: 500n, capture: 300n } as const;
const CHUNK = 100_000;
const YEAR_MS = 365 * 24 * 3600 * 1000;

/** The wallet's holdings after its n-th seeded entry (1-based), in closed form. */
function heldAfter(n: number): { balance: bigint; reserved: bigint } {
  const unit = BigInt(Math.floor((n - 1) / 4));
  const step = (n - 1) % 4;
  const before = unit * (UNIT.credit - UNIT.capture);
  if (step === 0) return { balance: before + UNIT.credit, reserved: 0n };
  if (step === 1) return { balance: before + UNIT.credit, reserved: UNIT.reserve };
  if (step === 2) return { balance: before + UNIT.credit - UNIT.capture, reserved: UNIT.reserve - UNIT.capture };
  return { balance: before + UNIT.credit - UNIT.capture, reserved: 0n };
}

const micros = (decimal: string) => {
  const [whole, fraction = ''] = decimal.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
};

async function api(baseUrl: string, token: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const answer = (await response.json()) as any;
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

/** Entries `from`..`to` (1-based places in the wallet's order), one INSERT … SELECT generate_series. */
async function seedChunk(pool: pg.Pool, wallet: { id: string; tenantId: string; funding: string; revenue: string }, from: number, to: number, start: Date, spacingMicros: number) {
  await pool.query(
    `insert into ledger_entries (id, settlement_key, entry_type, flags, pending_id, debit_account_id, credit_account_id, amount, currency, tenant_id, job_id,
                                 created_at, wallet_id, wallet_seq, balance_after, reserved_after)
     select md5($1 || ':' || n)::uuid,
            $1 || ':' || u || case s when 0 then ':credit' when 1 then ':hold' else ':capture:1' end,
            (array['credit', 'reserve', 'capture', 'release_remainder'])[s + 1],
            (array['posted', 'pending', 'post_pending', 'void_pending'])[s + 1],
            case when s >= 2 then md5($1 || ':' || (n - s + 1))::uuid end,
            case s when 0 then $3::uuid else $2::uuid end,
            case s when 0 then $2::uuid else $4::uuid end,
            (array[$5::bigint, $6::bigint, $7::bigint, $6::bigint - $7::bigint])[s + 1],
            'USD', $1::uuid,
            case when s > 0 then md5($1 || ':job:' || u)::uuid end,
            $8::timestamptz + (n * $9::bigint) * interval '1 microsecond',
            $2::uuid, n,
            u * ($5::bigint - $7::bigint) + case when s = 0 or s = 1 then $5::bigint else $5::bigint - $7::bigint end,
            case s when 1 then $6::bigint when 2 then $6::bigint - $7::bigint else 0 end
     from generate_series($10::bigint, $11::bigint) n, lateral (select (n - 1) / 4 as u, ((n - 1) % 4)::int as s) p`,
    [wallet.tenantId, wallet.id, wallet.funding, wallet.revenue, UNIT.credit.toString(), UNIT.reserve.toString(), UNIT.capture.toString(), start, spacingMicros, from, to],
  );
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export async function measureBalanceAt(config: BalanceAtConfig): Promise<BalanceAtResult> {
  const url = await recreateDatabase(config.adminUrl, 'tally_bench_at');
  const pool = benchPool(url, 2);
  const adminToken = `bench-admin-${process.pid}`;
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env = { DATABASE_URL: url, TALLY_ADMIN_TOKEN: adminToken, LOG_LEVEL: config.logLevel, HOST: '127.0.0.1', TALLY_RECONCILE_INTERVAL_SECONDS: '0' };
  const server = runTally('serve', ['serve', '--port', String(port), '--workers', '0'], env, join(config.workDir, 'balance-at-serve.log'));
  try {
    await waitFor('tally serve answering /healthz', async () => (await fetch(`${baseUrl}/healthz`)).status === 200, 60_000, () => exitReason(server));
    const tenant = await api(baseUrl, adminToken, 'POST', '/v1/tenants', { name: 'balance-at' });
    const opened = await api(baseUrl, tenant.api_key, 'POST', '/v1/wallets', { currency: 'USD' });
    const accounts = await pool.query<{ kind: string; id: string }>(`select kind, id from accounts where tenant_id = $1`, [tenant.id]);
    const accountOf = (kind: string) => accounts.rows.find((a) => a.kind === kind)!.id;
    const wallet = { id: opened.id as string, tenantId: tenant.id as string, funding: accountOf('funding'), revenue: accountOf('revenue') };
    const entries = config.entries - (config.entries % 4);

    // Over the past year up to a minute ago, evenly: about one entry every 31 ms for a million.
    const start = new Date(Date.now() - YEAR_MS);
    const spacingMicros = Math.floor(((YEAR_MS - 60_000) * 1000) / entries);
    note(`[balance-at] seeding ${entries.toLocaleString('en-US')} entries of one wallet (set-based, ${CHUNK.toLocaleString('en-US')} per INSERT)…`);
    const progress = bars('[balance-at] seeding', { entries });
    const seedStarted = performance.now();
    for (let from = 1; from <= entries; from += CHUNK) {
      const to = Math.min(entries, from + CHUNK - 1);
      await seedChunk(pool, wallet, from, to, start, spacingMicros);
      const seconds = (performance.now() - seedStarted) / 1000;
      progress.update({ entries: to }, { entries: `${Math.round(to / seconds).toLocaleString('en-US')}/s` });
    }
    progress.stop();
    // The head and the projections, as if Tally had posted every entry.
    const last = heldAfter(entries);
    const posted = { credited: BigInt(entries / 4) * UNIT.credit, captured: BigInt(entries / 4) * UNIT.capture };
    await pool.query(
      `update accounts set entry_seq = $2, running_balance = $3, running_reserved = $4,
              last_entry_at = $5::timestamptz + ($2 * $6::bigint) * interval '1 microsecond',
              credits_posted = $7, debits_posted = $8
       where id = $1`,
      [wallet.id, entries, last.balance, last.reserved, start, spacingMicros, posted.credited, posted.captured],
    );
    await pool.query('update accounts set debits_posted = $2 where id = $1', [wallet.funding, posted.credited]);
    await pool.query('update accounts set credits_posted = $2 where id = $1', [wallet.revenue, posted.captured]);
    note('[balance-at] vacuum analyze ledger_entries…');
    await pool.query('vacuum analyze ledger_entries');
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const tableBytes = Number((await pool.query<{ bytes: string }>(`select pg_total_relation_size('ledger_entries')::text as bytes`)).rows[0]!.bytes);
    note(`[balance-at] seeded in ${seedSeconds.toFixed(1)} s (with the vacuum); ledger_entries and its indexes: ${(tableBytes / 2 ** 20).toFixed(0)} MiB`);

    // Tally's own path continues the order: one top-up over the API.
    const topUp = await fetch(`${baseUrl}/v1/wallets/${wallet.id}/credits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json', 'idempotency-key': 'balance-at-top-up' },
      body: JSON.stringify({ amount: '1.00' }),
    }).then((r) => r.json() as Promise<any>);
    let correct = topUp.sequence === entries + 1 && micros(topUp.balance_after) === last.balance + 1_000_000n;

    // Random instants of the seeded year; each answer is checked against the closed form.
    const random = new Random(config.seed);
    const times: number[] = [];
    note(`[balance-at] GET /v1/wallets/{id}?at= at ${config.samples} random instants…`);
    for (let i = 0; i < config.samples; i++) {
      const offsetMicros = BigInt(Math.floor(random.next() * (entries * spacingMicros)));
      const at = new Date(start.getTime() + Number(offsetMicros / 1000n)).toISOString();
      const began = performance.now();
      const answer = await api(baseUrl, tenant.api_key, 'GET', `/v1/wallets/${wallet.id}?at=${at}`);
      times.push(performance.now() - began);
      const expected = answer.sequence === 0 ? { balance: 0n, reserved: 0n } : heldAfter(answer.sequence);
      // The place found is the last one at or before the instant (instants: start + n × spacing).
      const instantOf = (n: number) => BigInt(start.getTime()) * 1000n + BigInt(n) * BigInt(spacingMicros);
      const asked = BigInt(Date.parse(at)) * 1000n;
      const placed = (answer.sequence === 0 || instantOf(answer.sequence) <= asked) && instantOf(answer.sequence + 1) > asked;
      correct &&= placed && micros(answer.balance) === expected.balance && micros(answer.reserved) === expected.reserved;
    }
    const sorted = [...times].sort((a, b) => a - b);
    const middle = new Date(start.getTime() + YEAR_MS / 2).toISOString();
    const plan = await pool.query<{ 'QUERY PLAN': string }>(
      `explain (analyze, buffers) select wallet_seq, balance_after, reserved_after from ledger_entries
       where wallet_id = $1 and created_at <= $2::timestamptz order by created_at desc, wallet_seq desc limit 1`,
      [wallet.id, middle],
    );
    const lines = plan.rows.map((r) => r['QUERY PLAN']);
    const queryMs = Number(/Execution Time: ([\d.]+) ms/.exec(lines.join('\n'))?.[1] ?? NaN);

    const deep = md5Uuid(`${wallet.tenantId}:${Math.floor(entries / 2)}`);
    const pageStarted = performance.now();
    const page = await api(baseUrl, tenant.api_key, 'GET', `/v1/wallets/${wallet.id}/entries?limit=100&starting_after=${deep}`);
    const deepPageMs = performance.now() - pageStarted;
    correct &&= page.data.length === 100 && page.data[0].sequence === Math.floor(entries / 2) - 1;

    const dayFrom = new Date(start.getTime() + YEAR_MS / 3).toISOString();
    const dayTo = new Date(start.getTime() + YEAR_MS / 3 + 24 * 3600 * 1000).toISOString();
    const statementStarted = performance.now();
    const statement = await api(baseUrl, tenant.api_key, 'GET', `/v1/wallets/${wallet.id}/statement?from=${dayFrom}&to=${dayTo}`).catch((error: Error) => ({ error }));
    const statementMs = performance.now() - statementStarted;
    const statementLines = 'lines' in statement ? statement.lines.length : -1;

    return {
      entries,
      seedSeconds,
      seedEntriesPerSecond: entries / seedSeconds,
      tableBytes,
      samples: config.samples,
      latencyMs: { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1)!, first: times[0]! },
      queryMs,
      plan: lines[0] ?? '',
      deepPageMs,
      statementOfADay: { lines: statementLines, ms: statementMs },
      correct,
    };
  } finally {
    await server.stop();
    await pool.end();
  }
}

/** PostgreSQL's md5(text)::uuid, as the seed makes the entries' ids. */
function md5Uuid(text: string): string {
  const hex = createHash('md5').update(text).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Under this, issue 13's target for a balance at an instant is met (p99, over HTTP). */
export const BALANCE_AT_TARGET_MS = 50;

export function formatBalanceAt(r: BalanceAtResult): string {
  const n = (x: number, digits = 1) => x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return [
    `Balance at an instant — one wallet with ${r.entries.toLocaleString('en-US')} entries: ${r.correct ? 'exact' : 'WRONG'}`,
    `  seeded in ${n(r.seedSeconds)} s (${Math.round(r.seedEntriesPerSecond).toLocaleString('en-US')} entries/s, set-based, with the vacuum); ledger_entries with its indexes ${n(r.tableBytes / 2 ** 20, 0)} MiB`,
    `  GET /v1/wallets/{id}?at= over HTTP, ${r.samples} random instants: p50 ${n(r.latencyMs.p50, 2)} ms, p99 ${n(r.latencyMs.p99, 2)} ms, max ${n(r.latencyMs.max, 2)} ms (first ${n(r.latencyMs.first, 2)} ms) — target p99 < ${BALANCE_AT_TARGET_MS} ms: ${r.latencyMs.p99 < BALANCE_AT_TARGET_MS ? 'met' : 'MISSED'}`,
    `  the lookup in PostgreSQL: ${n(r.queryMs, 3)} ms (EXPLAIN ANALYZE: ${r.plan.trim()})`,
    `  a page of 100 entries from the middle of the order: ${n(r.deepPageMs, 2)} ms; a statement of one day (${r.statementOfADay.lines.toLocaleString('en-US')} lines): ${n(r.statementOfADay.ms, 0)} ms`,
  ].join('\n');
}
