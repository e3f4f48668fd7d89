import type { WindowCpu } from './cpu-window.js';
import type { Percentiles } from './load-protocol.js';

/** What the bench's TPC-B is (bench/tpcb.ts says why): its sizes, its script, its result. */

export type TpcbTool = 'pgbench' | 'builtin';

export interface TpcbResult {
  tool: TpcbTool;
  /** `pgbench --version`, or what the built-in equivalent is */
  program: string;
  script: 'tpcb-like';
  scale: number;
  clients: number;
  threads: number;
  queryMode: 'simple';
  /** the measured window, connections excluded */
  seconds: number;
  transactions: number;
  failed: number;
  /** transactions per second without the initial connection time */
  perSecond: number;
  latencyMs: Percentiles & { mean: number };
  cpuSeconds: WindowCpu;
}

export interface TpcbRun {
  /** the database to initialise and measure (created empty by the caller) */
  url: string;
  clients: number;
  seconds: number;
  postmasterPid: number | null;
  /** where pgbench writes its per-transaction logs */
  workDir: string;
  seed: number;
  onProgress?: (message: string) => void;
  /** CHECKPOINT between initialisation and the measurement */
  checkpoint(): Promise<void>;
}

/** pgbench's scale factor for the limit: the scale of the reference figure. */
export const TPCB_SCALE = 1;

/** Rows per unit of scale: pgbench's nbranches, ntellers, naccounts (and its script's random ranges). */
export const TPCB_SIZES = { branches: 1, tellers: 10, accounts: 100_000 } as const;

/**
 * `pgbench -i` (init steps dtGvp: drop, create, server-side generate, vacuum, primary
 * keys), as pgbench 15 sends it for a scale below 20,000 (int keys). Server-side
 * generation gives the same rows as the default client-side COPY.
 */
export function initStatements(scale: number): string[] {
  const { branches, tellers, accounts } = TPCB_SIZES;
  return [
    'drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers',
    'create table pgbench_history(tid int,bid int,aid int,delta int,mtime timestamp,filler char(22))',
    'create table pgbench_tellers(tid int not null,bid int,tbalance int,filler char(84)) with (fillfactor=100)',
    'create table pgbench_accounts(aid int not null,bid int,abalance int,filler char(84)) with (fillfactor=100)',
    'create table pgbench_branches(bid int not null,bbalance int,filler char(88)) with (fillfactor=100)',
    `insert into pgbench_branches(bid,bbalance) select bid, 0 from generate_series(1, ${branches * scale}) as bid`,
    `insert into pgbench_tellers(tid,bid,tbalance) select tid, (tid - 1) / ${tellers} + 1, 0 from generate_series(1, ${tellers * scale}) as tid`,
    `insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / ${accounts} + 1, 0, '' from generate_series(1, ${accounts * scale}) as aid`,
    'vacuum analyze pgbench_branches',
    'vacuum analyze pgbench_tellers',
    'vacuum analyze pgbench_accounts',
    'vacuum analyze pgbench_history',
    'alter table pgbench_branches add primary key (bid)',
    'alter table pgbench_tellers add primary key (tid)',
    'alter table pgbench_accounts add primary key (aid)',
  ];
}

/** What pgbench does before every run unless -n: vacuum the small tables, empty the history. */
export const BEFORE_RUN = ['vacuum pgbench_branches', 'vacuum pgbench_tellers', 'truncate pgbench_history'];

/** One draw of the script's variables: \set aid random(1, 100000 * :scale), and so on. */
export interface TpcbDraw {
  aid: number;
  bid: number;
  tid: number;
  delta: number;
}

/**
 * pgbench's built-in "tpcb-like" script, statement by statement, with the variables
 * substituted into the text as simple query mode (-M simple, the default) does.
 */
export function tpcbStatements({ aid, bid, tid, delta }: TpcbDraw): string[] {
  return [
    'BEGIN;',
    `UPDATE pgbench_accounts SET abalance = abalance + ${delta} WHERE aid = ${aid};`,
    `SELECT abalance FROM pgbench_accounts WHERE aid = ${aid};`,
    `UPDATE pgbench_tellers SET tbalance = tbalance + ${delta} WHERE tid = ${tid};`,
    `UPDATE pgbench_branches SET bbalance = bbalance + ${delta} WHERE bid = ${bid};`,
    `INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (${tid}, ${bid}, ${aid}, ${delta}, CURRENT_TIMESTAMP);`,
    'END;',
  ];
}

