import pg from 'pg';
import { cpuWindow } from './cpu-window.js';
import { BENCH_APPLICATION } from './database.js';
import { percentiles } from './load-protocol.js';
import { Random } from './random.js';
import { BEFORE_RUN, TPCB_SCALE, TPCB_SIZES, initStatements, tpcbStatements, type TpcbDraw, type TpcbResult, type TpcbRun } from './tpcb-spec.js';

/** The tpcb-like script's \set lines: each variable uniform over its range, as pgbench's random(lb, ub). */
function draw(random: Random, scale: number): TpcbDraw {
  return {
    aid: random.int(1, TPCB_SIZES.accounts * scale),
    bid: random.int(1, TPCB_SIZES.branches * scale),
    tid: random.int(1, TPCB_SIZES.tellers * scale),
    delta: random.int(-5000, 5000),
  };
}

/**
 * pgbench's TPC-B without pgbench: the same initialisation, the same pre-run vacuum,
 * then one connection per client sending the script's seven statements one round trip
 * each through the simple query protocol (node-postgres uses it for a query without
 * parameters), as `pgbench -M simple` does. One Node thread drives every client, where
 * pgbench uses one thread per CPU; the report compares the two on this machine.
 */
export async function runBuiltinTpcb(run: TpcbRun): Promise<TpcbResult> {
  run.onProgress?.(`no pgbench found: the built-in TPC-B (node-postgres), initialising scale ${TPCB_SCALE}`);
  const connect = async () => {
    const client = new pg.Client({ connectionString: run.url, application_name: BENCH_APPLICATION });
    await client.connect();
    return client;
  };
  const admin = await connect();
  try {
    for (const statement of initStatements(TPCB_SCALE)) await admin.query(statement);
    await run.checkpoint();
    for (const statement of BEFORE_RUN) await admin.query(statement);
  } finally {
    await admin.end();
  }
  const clients = await Promise.all(Array.from({ length: run.clients }, connect));
  const latencies: number[] = [];
  let transactions = 0;
  const window = cpuWindow(run.postmasterPid);
  const started = performance.now();
  const deadline = started + run.seconds * 1000;
  const progress = setInterval(() => run.onProgress?.(`${transactions} tx in ${((performance.now() - started) / 1000).toFixed(0)} s`), 1000);
  let seconds = 0;
  let cpuSeconds: TpcbResult['cpuSeconds'];
  try {
    await Promise.all(
      clients.map(async (client, i) => {
        const random = new Random(run.seed * 1000 + i);
        while (performance.now() < deadline) {
          const t0 = performance.now();
          for (const statement of tpcbStatements(draw(random, TPCB_SCALE))) await client.query(statement);
          latencies.push(performance.now() - t0);
          transactions++;
        }
      }),
    );
    seconds = (performance.now() - started) / 1000;
    cpuSeconds = window.end();
  } finally {
    clearInterval(progress);
    await Promise.all(clients.map((c) => c.end().catch(() => {})));
  }
  return {
    tool: 'builtin',
    program: 'built-in tpcb-like (node-postgres, simple query protocol, one thread)',
    script: 'tpcb-like',
    scale: TPCB_SCALE,
    clients: run.clients,
    threads: 1,
    queryMode: 'simple',
    seconds,
    transactions,
    failed: 0,
    perSecond: transactions / seconds,
    latencyMs: { ...percentiles(latencies), mean: latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length) },
    cpuSeconds,
  };
}
