import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findPgbench } from '../../bench/tpcb.js';
import { runBuiltinTpcb } from '../../bench/tpcb-node.js';
import { parsePgbenchSummary } from '../../bench/tpcb-pgbench.js';
import { freshDatabase } from '../support/database.js';

/**
 * The bench's limit (bench/tpcb.ts): which pgbench it finds, what it reads from
 * pgbench's output, and that the built-in TPC-B does what pgbench's tpcb-like script
 * does to pgbench's tables — every transaction moves one delta through an account, a
 * teller, the branch and the history, so the four sums agree afterwards.
 */

const PGBENCH_15 = `pgbench (15.18 (Debian 15.18-0+deb12u1), server 18.4)
transaction type: <builtin: TPC-B (sort of)>
scaling factor: 1
query mode: simple
number of clients: 16
number of threads: 2
maximum number of tries: 1
duration: 5 s
number of transactions actually processed: 2160
number of failed transactions: 0 (0.000%)
latency average = 36.125 ms
initial connection time = 184.396 ms
tps = 442.900490 (without initial connection time)
`;

const PGBENCH_12 = `transaction type: <builtin: TPC-B (sort of)>
scaling factor: 1
query mode: simple
number of clients: 16
number of threads: 2
duration: 5 s
number of transactions actually processed: 6860
latency average = 11.663 ms
tps = 1371.848161 (including connections establishing)
tps = 1372.513260 (excluding connections establishing)
`;

describe('the bench finds pgbench', () => {
  it('BENCH_PGBENCH=none forces the built-in one, a path is taken as given, otherwise PATH is searched', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tpcb-path-'));
    const fake = join(dir, 'pgbench');
    await writeFile(fake, '#!/bin/sh\n');
    await chmod(fake, 0o755);
    expect(findPgbench({ BENCH_PGBENCH: 'none', PATH: dir })).toBeNull();
    expect(findPgbench({ BENCH_PGBENCH: fake })).toBe(fake);
    expect(findPgbench({ PATH: `/nonexistent:${dir}` })).toBe(fake);
    expect(() => findPgbench({ BENCH_PGBENCH: join(dir, 'missing') })).toThrow(/BENCH_PGBENCH=none/);
  });
});

describe("pgbench's summary", () => {
  it('reads tps without connection time, transactions, failures and mean latency (pgbench 15 and before 14)', () => {
    expect(parsePgbenchSummary(PGBENCH_15)).toEqual({ perSecond: 442.90049, transactions: 2160, failed: 0, meanLatencyMs: 36.125 });
    expect(parsePgbenchSummary(PGBENCH_12)).toEqual({ perSecond: 1372.51326, transactions: 6860, failed: 0, meanLatencyMs: 11.663 });
    expect(() => parsePgbenchSummary('pgbench: error: connection failed')).toThrow(/no tps/);
  });
});

describe('the built-in TPC-B', () => {
  it("initialises pgbench's scale-1 tables and runs its tpcb-like script from every client", async () => {
    const db = await freshDatabase({ max: 2 });
    const progress: string[] = [];
    const result = await runBuiltinTpcb({
      url: db.url,
      clients: 4,
      seconds: 1,
      postmasterPid: null,
      workDir: tmpdir(),
      seed: 7,
      onProgress: (message) => progress.push(message),
      checkpoint: async () => {},
    });
    expect(result).toMatchObject({ tool: 'builtin', script: 'tpcb-like', scale: 1, clients: 4, failed: 0 });
    expect(result.transactions).toBeGreaterThan(0);
    expect(result.perSecond).toBeCloseTo(result.transactions / result.seconds, 6);
    const { rows } = await db.pool.query<Record<string, string>>(
      `select (select count(*) from pgbench_branches)::text as branches,
              (select count(*) from pgbench_tellers)::text as tellers,
              (select count(*) from pgbench_accounts)::text as accounts,
              (select count(*) from pgbench_history)::text as history,
              (select sum(abalance) from pgbench_accounts)::text as accounts_sum,
              (select sum(tbalance) from pgbench_tellers)::text as tellers_sum,
              (select sum(bbalance) from pgbench_branches)::text as branches_sum,
              (select sum(delta) from pgbench_history)::text as history_sum,
              (select count(*) from pgbench_history
                where tid not between 1 and 10 or bid <> 1 or aid not between 1 and 100000 or delta not between -5000 and 5000)::text as out_of_range`,
    );
    const row = rows[0]!;
    expect(row).toMatchObject({ branches: '1', tellers: '10', accounts: '100000', history: String(result.transactions) });
    expect(new Set([row['accounts_sum'], row['tellers_sum'], row['branches_sum']])).toEqual(new Set([row['history_sum']]));
    expect(row['out_of_range']).toBe('0');
    expect(progress[0]).toMatch(/built-in TPC-B/);
  });
});
