import pg from 'pg';
import { cpuWindow, type WindowCpu } from './cpu-window.js';
import { percentiles, type Percentiles } from './load-protocol.js';
import { BENCH_APPLICATION } from './database.js';

/**
 * Secondary context beside the limit (pgbench TPC-B, bench/tpcb.ts), measured with
 * --minimal-limit: the rate of minimal durable transactions — BEGIN, UPDATE one row,
 * INSERT one row, COMMIT (four round trips, one WAL flush), the smallest transaction
 * that changes state — from as many connections as the workers use. It shows what one
 * commit costs this server, apart from TPC-B's seven statements.
 *
 * Two shapes: every connection on its own row ("distinct rows", the spread scenario's
 * best case), and every connection on one row ("one row", the hot wallet's best case:
 * the row lock is held from the UPDATE until COMMIT's flush, so commits serialise).
 */

export type LimitShape = 'distinct_rows' | 'one_row';

export interface LimitResult {
  shape: LimitShape;
  connections: number;
  seconds: number;
  transactions: number;
  perSecond: number;
  latencyMs: Percentiles;
  cpuSeconds: WindowCpu;
}

export async function prepareLimit(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, application_name: BENCH_APPLICATION });
  await client.connect();
  try {
    await client.query(`create table if not exists limit_rows (id integer primary key, n bigint not null default 0)`);
    await client.query(`create table if not exists limit_log (id bigserial primary key, row_id integer not null, amount bigint not null, created_at timestamptz not null default now())`);
    await client.query(`insert into limit_rows (id) select generate_series(1, 1000) on conflict do nothing`);
  } finally {
    await client.end();
  }
}

export async function measureLimit(
  url: string,
  shape: LimitShape,
  connections: number,
  seconds: number,
  postmasterPid: number | null,
  onProgress?: (transactions: number, elapsedSeconds: number) => void,
): Promise<LimitResult> {
  const clients = await Promise.all(
    Array.from({ length: connections }, async () => {
      const client = new pg.Client({ connectionString: url, application_name: BENCH_APPLICATION });
      await client.connect();
      return client;
    }),
  );
  const latencies: number[] = [];
  let transactions = 0;
  const window = cpuWindow(postmasterPid);
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const progress = setInterval(() => onProgress?.(transactions, (performance.now() - started) / 1000), 1000);
  try {
    await Promise.all(
      clients.map(async (client, i) => {
        const row = shape === 'one_row' ? 1 : i + 1;
        while (performance.now() < deadline) {
          const t0 = performance.now();
          await client.query('begin');
          await client.query('update limit_rows set n = n + 1 where id = $1', [row]);
          await client.query('insert into limit_log (row_id, amount) values ($1, $2)', [row, 1]);
          await client.query('commit');
          latencies.push(performance.now() - t0);
          transactions++;
        }
      }),
    );
  } finally {
    clearInterval(progress);
    await Promise.all(clients.map((c) => c.end().catch(() => {})));
  }
  const elapsed = (performance.now() - started) / 1000;
  return { shape, connections, seconds: elapsed, transactions, perSecond: transactions / elapsed, latencyMs: percentiles(latencies), cpuSeconds: window.end() };
}
